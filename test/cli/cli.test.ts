import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'dsh-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, (l) => out.push(l), (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('dsh command', () => {
  it('tour --log writes a session log that `dsh log` prints back; a second tour continues it', async () => {
    const file = join(dir, 'session.jsonl');
    const first = await run('tour', '--log', file);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/turn\/end turn-1: completed after 2 steps/);
    for (const code of ['POLICY_DENIED', 'GUARD_DENIED', 'TIMEOUT', 'TOOL_FAILED', 'INVALID_ARGS']) expect(first.out).toContain(code);
    expect(first.out).toContain('tool/approval-answer');
    // A tour shows the pipeline, not internal warnings (issue 32 item 7): its slow fetch stops at its abort.
    expect(first.out).not.toMatch(/\bwarning\b/);
    expect(first.out.trim().split('\n').at(-1)).toMatch(/^outcome: completed;/);
    const second = await run('tour', '--log', file);
    expect(second.code).toBe(0);
    const printed = await run('log', file);
    expect(printed.code).toBe(0);
    expect(printed.out).toMatch(/^ {3}1 turn\/start turn-1/);
    expect(printed.out).toMatch(/turn\/start turn-2/);
    expect(printed.out.split('\n').filter((l) => l.includes('turn/end'))).toHaveLength(2);
  }, 20_000);

  it('reports a torn last line without failing, a bad line with its line number, a missing file, an unknown command', async () => {
    const file = join(dir, 'torn.jsonl');
    await run('tour', '--log', file);
    appendFileSync(file, '{"seq": 99, "type": "tool/ca');
    const torn = await run('log', file);
    expect(torn.code).toBe(0);
    expect(torn.err).toMatch(/torn/i);
    appendFileSync(file, '\n');
    const bad = await run('log', file);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/torn\.jsonl:\d+: MISSING_CHECKSUM/);
    // One flipped bit in line 3 of a good log.
    const flipped = join(dir, 'flipped.jsonl');
    await run('tour', '--log', flipped);
    const bytes = readFileSync(flipped);
    const endOfLine2 = bytes.indexOf(10, bytes.indexOf(10) + 1);
    bytes[endOfLine2 + 30]! ^= 0x04;
    writeFileSync(flipped, bytes);
    const flip = await run('log', flipped);
    expect(flip.code).toBe(1);
    expect(flip.err).toMatch(/flipped\.jsonl:3: CHECKSUM_MISMATCH: the line says [0-9a-f]{8}, its content has [0-9a-f]{8}/);
    expect(flip.out.split('\n')).toHaveLength(2); // lines 1 and 2 were printed
    expect((await run('log', join(dir, 'missing.jsonl'))).err).toMatch(/no such file/);
    const unknown = await run('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/unknown command "frobnicate"/);
  }, 20_000);

  it('resuming a session that died mid-turn closes its open calls, step and turn before going on', async () => {
    const file = join(dir, 'crashed.jsonl');
    await run('tour', '--log', file);
    // Keep the log only up to the first tool/call, as if the process had died right after it.
    const lines = readFileSync(file, 'utf8').split('\n');
    const cut = lines.findIndex((l) => l.includes('"type":"tool/call"'));
    writeFileSync(file, lines.slice(0, cut + 1).join('\n') + '\n');
    const resumed = await run('tour', '--log', file);
    expect(resumed.err).toMatch(/resumed an interrupted session: 1 call\(s\) marked INTERRUPTED, 1 step\(s\) and 1 turn\(s\) closed/);
    const printed = await run('log', file);
    expect(printed.out).toMatch(/tool\/result call-1-0 ✗ INTERRUPTED/);
    expect(printed.out).toMatch(/turn\/end turn-1: failed/);
    expect(printed.out).toMatch(/turn\/end turn-2: completed/);
  }, 20_000);
});
