/**
 * The checked-in diagrams: `visualizations/<name>.mmd` and `<name>.svg` for every machine of a
 * registry. Writing and checking share `renderDiagrams`, so what the stale test expects is
 * exactly what `npm run viz` writes.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AnyStateMachine } from 'xstate';
import { readMachineGraph } from './machineGraph.js';
import { graphToMermaid } from './mermaid.js';
import { graphToSvg } from './svg.js';

export type MachineRegistry = Readonly<Record<string, AnyStateMachine>>;

export interface RenderedDiagram {
  readonly name: string;
  readonly mermaid: string;
  readonly svg: string;
}

/** Renders every machine of the registry, in name order so the output never depends on insertion order. */
export async function renderDiagrams(registry: MachineRegistry): Promise<RenderedDiagram[]> {
  const out: RenderedDiagram[] = [];
  for (const name of Object.keys(registry).sort()) {
    const graph = readMachineGraph(registry[name]!);
    out.push({ name, mermaid: graphToMermaid(graph), svg: await graphToSvg(graph) });
  }
  return out;
}

/**
 * Writes `<name>.mmd` and `<name>.svg` for every machine into `dir`, leaving files whose content
 * is unchanged untouched, and removes diagrams of machines no longer in the registry. Returns
 * the paths it wrote or removed.
 */
export async function writeDiagrams(registry: MachineRegistry, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const changed: string[] = [];
  const expected = new Set<string>();
  for (const d of await renderDiagrams(registry)) {
    for (const [file, text] of [
      [`${d.name}.mmd`, d.mermaid],
      [`${d.name}.svg`, d.svg],
    ] as const) {
      expected.add(file);
      const path = join(dir, file);
      if ((await readOrUndefined(path)) !== text) {
        await writeFile(path, text);
        changed.push(path);
      }
    }
  }
  for (const file of (await readdir(dir)).sort()) {
    if (/\.(mmd|svg)$/.test(file) && !expected.has(file)) {
      await rm(join(dir, file));
      changed.push(join(dir, file));
    }
  }
  return changed;
}

/** Why one checked-in diagram does not match its machine. */
export interface StaleDiagram {
  readonly name: string;
  readonly file: string;
  readonly reason: 'missing' | 'differs' | 'orphan';
  /** For `differs`: the first line that differs, as `line N: file has "…", machine gives "…"`. */
  readonly detail?: string;
}

/** Compares the `.mmd` file of every machine with its regenerated text; also reports `.mmd` files of no registered machine. */
export async function findStaleMermaid(registry: MachineRegistry, dir: string): Promise<StaleDiagram[]> {
  const stale: StaleDiagram[] = [];
  for (const name of Object.keys(registry).sort()) {
    const file = join(dir, `${name}.mmd`);
    const onDisk = await readOrUndefined(file);
    const fresh = graphToMermaid(readMachineGraph(registry[name]!));
    if (onDisk === undefined) stale.push({ name, file, reason: 'missing' });
    else if (onDisk !== fresh) stale.push({ name, file, reason: 'differs', detail: firstDifference(onDisk, fresh) });
  }
  let files: string[] = [];
  try {
    files = await readdir(dir);
  } catch {
    // No folder at all: every machine was already reported missing.
  }
  for (const file of files.sort()) {
    const name = file.replace(/\.mmd$/, '');
    if (file.endsWith('.mmd') && !Object.hasOwn(registry, name)) stale.push({ name, file: join(dir, file), reason: 'orphan' });
  }
  return stale;
}

function firstDifference(onDisk: string, fresh: string): string {
  const a = onDisk.split('\n');
  const b = fresh.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (line: string | undefined): string => (line === undefined ? 'nothing' : JSON.stringify(line.trim()));
  return `line ${i + 1}: file has ${show(a[i])}, machine gives ${show(b[i])}`;
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}
