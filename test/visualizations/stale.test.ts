/**
 * The checked-in diagrams in `visualizations/` must be what `npm run viz` makes of the machines
 * as they are now. A failure names the machine; the fix is `npm run viz` and a commit.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createMachine, type AnyStateMachine } from 'xstate';
import { machineRegistry } from '../../machines/registry.js';
import { findStaleMermaid, renderDiagrams } from '../../scripts/viz/files.js';
import { machineToMermaid } from '../../scripts/viz/mermaid.js';

const dir = fileURLToPath(new URL('../../visualizations/', import.meta.url));
const names = Object.keys(machineRegistry).sort();
const fix = 'run `npm run viz` and commit visualizations/';

describe('checked-in visualizations', () => {
  it('the registry has machines to draw', () => {
    expect(names.length).toBeGreaterThan(0);
  });

  it.each(names.map((name) => ({ name, file: `visualizations/${name}.mmd` })))('$file matches the $name machine', async ({ name }) => {
    const [stale] = (await findStaleMermaid(machineRegistry, dir)).filter((s) => s.name === name);
    const why = stale?.reason === 'missing' ? 'missing' : `stale (${stale?.detail})`;
    expect(stale, `visualizations/${name}.mmd is ${why} for machine "${name}": ${fix}`).toBeUndefined();
  });

  it('has no .mmd file for a machine that is not in the registry', async () => {
    const orphans = (await findStaleMermaid(machineRegistry, dir)).filter((s) => s.reason === 'orphan');
    expect(orphans.map((o) => o.name), `diagrams of unregistered machines: ${fix}`).toEqual([]);
  });

  it('the checked-in SVGs match the machines too', async () => {
    // ELK's layout is deterministic (fixed seed, no clock), so the picture can be pinned as well.
    const stale: string[] = [];
    for (const d of await renderDiagrams(machineRegistry)) {
      const onDisk = await readFile(join(dir, `${d.name}.svg`), 'utf8').catch(() => undefined);
      if (onDisk !== d.svg) stale.push(d.name);
    }
    expect(stale, `stale or missing SVGs for machines ${stale.join(', ')}: ${fix}`).toEqual([]);
  });
});

/**
 * A copy of a machine whose config has one `on` handler fewer: the first one in document order.
 * Config objects are copied on the way down so the registered machine is untouched.
 */
function withoutFirstOnHandler(machine: AnyStateMachine): { machine: AnyStateMachine; removed: string } | undefined {
  let removed: string | undefined;
  const strip = (config: Record<string, unknown>, path: string): Record<string, unknown> => {
    const copy = { ...config };
    const on = config.on as Record<string, unknown> | undefined;
    if (removed === undefined && on && Object.keys(on).length > 0) {
      const [event] = Object.keys(on);
      const { [event!]: _dropped, ...rest } = on;
      copy.on = rest;
      removed = `${path} on ${event}`;
    }
    const states = config.states as Record<string, Record<string, unknown>> | undefined;
    if (states) {
      copy.states = Object.fromEntries(Object.entries(states).map(([key, child]) => [key, strip(child, `${path}.${key}`)]));
    }
    return copy;
  };
  const config = strip(machine.config as Record<string, unknown>, `#${machine.id}`);
  if (removed === undefined) return undefined;
  // `implementations` carries setup()'s named actions, guards, actors and delays.
  return { machine: createMachine(config as never, machine.implementations as never) as AnyStateMachine, removed };
}

describe('the staleness check can fail', () => {
  const mutated = names.flatMap((name) => {
    const m = withoutFirstOnHandler(machineRegistry[name]!);
    return m ? [{ name, ...m }] : [];
  });

  it('at least one registered machine has an `on` handler to remove', () => {
    expect(mutated.length).toBeGreaterThan(0);
  });

  const folders: string[] = [];
  const tempFolder = async (): Promise<string> => {
    const folder = await mkdtemp(join(tmpdir(), 'dsh-viz-'));
    folders.push(folder);
    return folder;
  };
  afterAll(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it.each(mutated)('removing $removed from $name makes its .mmd stale', async ({ name, machine }) => {
    // Against a file written from the registered machine, so this holds whatever the checked-in files are.
    const folder = await tempFolder();
    await writeFile(join(folder, `${name}.mmd`), machineToMermaid(machineRegistry[name]!));
    const stale = await findStaleMermaid({ [name]: machine }, folder);
    expect(stale.map((s) => [s.name, s.reason])).toEqual([[name, 'differs']]);
    expect(stale[0]?.detail).toMatch(/^line \d+: file has ".*", machine gives ".*"$/);
  });

  it('reports a missing file and a file of an unregistered machine, by name', async () => {
    const folder = await tempFolder();
    const first = names[0]!;
    await writeFile(join(folder, 'retired.mmd'), 'stateDiagram-v2\n');
    const stale = await findStaleMermaid({ [first]: machineRegistry[first]! }, folder);
    expect(stale.map((s) => [s.name, s.reason])).toEqual([
      [first, 'missing'],
      ['retired', 'orphan'],
    ]);
  });

  it('accepts a file written from the same machine', async () => {
    const folder = await tempFolder();
    const first = names[0]!;
    await writeFile(join(folder, `${first}.mmd`), machineToMermaid(machineRegistry[first]!));
    expect(await findStaleMermaid({ [first]: machineRegistry[first]! }, folder)).toEqual([]);
  });
});
