// `dsh run`, `sessions`, `resume`, `log`, `repair` as a user runs them: real processes (from
// source through tsx) in temp directories, no terminal, no key, no network.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { LogEventSchema, type LogEvent } from '../../src/protocol/index.js';
import { dsh, startDsh, waitFor } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string> = { 'README.md': '# app\n\nTODO: write docs\n' }): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-run-'));
  dirs.push(dir);
  for (const [p, t] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), t);
  }
  return dir;
}

const sessionIds = (dir: string) => readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6)).sort();
const sessionFile = (dir: string, id: string) => join(dir, '.dsh', 'sessions', `${id}.jsonl`);

/** Every tool/call answered by exactly one tool/result, and every result answers a call. */
function expectPaired(events: readonly LogEvent[]) {
  const calls = events.filter((e) => e.type === 'tool/call').map((e) => e.seq);
  const answered = events.flatMap((e) => (e.type === 'tool/result' ? e.sourceEventSeqs : []));
  expect([...answered].sort((a, b) => a - b)).toEqual(calls);
}

const HANG = 120_000;

describe('dsh run (no terminal)', () => {
  it('runs the embedded model on the real directory: parallel read/grep/glob, the edit and the command denied with how to pre-approve; the log validates', async () => {
    const dir = workspace();
    const r = await dsh(dir, ['run', '--model', 'embedded', 'look around']);
    expect(r.code, r.err).toBe(0);
    const [id] = sessionIds(dir);
    expect(r.out).toContain(`session ${id}: ${sessionFile(dir, id!)}`);
    expect(r.err).toMatch(/denied edit README\.md \(call-2-0\): no terminal to ask; pre-approve with --allow edit/);
    expect(r.err).toMatch(/denied bash .*pre-approve with --allow bash/);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# app\n\nTODO: write docs\n');
    const { events, torn } = await readJsonlLog(sessionFile(dir, id!));
    expect(torn).toBeUndefined();
    expectPaired(events);
    // One plain line per event, in full.
    expect(r.out.split('\n').filter((l) => /^ *\d+ /.test(l))).toHaveLength(events.length);
    const first = events.filter((e) => e.type === 'tool/call' && e.stepIndex === 0).map((e) => (e as { toolName: string }).toolName);
    expect(first).toEqual(['read', 'grep', 'glob']);
    const denied = events.filter((e) => e.type === 'tool/result' && e.result.isError).map((e) => (e as { result: { error?: { code: string } } }).result.error?.code);
    expect(denied).toEqual(['APPROVAL_DENIED', 'APPROVAL_DENIED']);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
    expect(r.out).toMatch(/the change was not made/);
    // The grep did not find the session log itself (.dsh is git-ignored).
    expect(r.out).not.toMatch(/\.dsh\/sessions\/.*TODO/);
  }, HANG);

  it('--allow edit,bash pre-approves: the file is edited and the command runs; --json streams valid NDJSON events', async () => {
    const dir = workspace();
    const r = await dsh(dir, ['run', '--model', 'embedded', 'go', '--allow', 'edit,bash', '--json']);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# app (reviewed by dsh)\n\nTODO: write docs\n');
    const lines = r.out.trim().split('\n');
    // The last record says how the run ended; every other line is a log event.
    const result = JSON.parse(lines.pop()!) as Record<string, unknown>;
    expect(result).toMatchObject({ type: 'result', outcome: 'completed', steps: 4, exitCode: 0 });
    expect(result.text).toMatch(/^Done: /);
    const events = lines.map((l) => LogEventSchema.parse(JSON.parse(l)));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expectPaired(events);
    expect(events.filter((e) => e.type === 'tool/result').every((e) => !e.result.isError)).toBe(true);
    expect(r.err).toMatch(/^session \S+: /m);
  }, HANG);

  it('run --demo (what npm start runs) completes in a throwaway copy, prints where the log is, and dsh log replays it', async () => {
    const dir = workspace({});
    const r = await dsh(dir, ['run', '--demo']);
    expect(r.code, r.err).toBe(0);
    const file = /session log: (\S+)/.exec(r.out)?.[1];
    expect(file).toBeDefined();
    dirs.push(join(file!, '..', '..', '..'));
    expect(existsSync(file!)).toBe(true);
    expect(r.out).toMatch(/turn\/end turn-1: completed/);
    expect(r.out).toMatch(/tool\/result call-2-0 ✓ "edited README\.md/);
    const replay = await dsh(dir, ['log', file!]);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toMatch(/turn\/end turn-1: completed after 4 steps/);
    // Resumed by its file from elsewhere, it works in the demo copy again (its README is read there).
    const resumed = await dsh(dir, ['resume', file!, 'again']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toMatch(/tool\/result t2-call-1-0 ✓ "# greeter \(reviewed by dsh\)/);
    const { events } = await readJsonlLog(file!);
    const ids = events.flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));
    expect(new Set(ids).size).toBe(ids.length);
  }, HANG);

  it('bad usage exits 2; an unknown provider or a missing key is one line, exit 1, before any session is made', async () => {
    const dir = workspace();
    const noPrompt = await dsh(dir, ['run', '--model', 'embedded']);
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.err).toMatch(/missing PROMPT/);
    expect((await dsh(dir, ['run', '--model', 'embedded', 'x', '--frob'])).code).toBe(2);
    const key = await dsh(dir, ['run', 'x', '--model', 'openai:gpt-4o-mini']);
    expect(key.code).toBe(1);
    expect(key.err.trim().split('\n')).toHaveLength(1);
    expect(key.err).toMatch(/OPENAI_API_KEY/);
    expect(existsSync(join(dir, '.dsh'))).toBe(false);
  }, HANG);
});

describe('sessions on disk', () => {
  it('sessions lists id, start, turns and last outcome; resume runs the next turn in the same log; log --full prints texts uncut', async () => {
    const dir = workspace();
    expect((await dsh(dir, ['sessions'])).out).toMatch(/no sessions/);
    expect((await dsh(dir, ['run', '--model', 'embedded', 'first'])).code).toBe(0);
    const [id] = sessionIds(dir);
    const again = await dsh(dir, ['resume', id!, 'second']);
    expect(again.code, again.err).toBe(0);
    const list = await dsh(dir, ['sessions']);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  2 +completed +first$`, 'm'));
    expect(list.out).toMatch(/^ID +START \(UTC\) +TURNS +LAST +FIRST PROMPT$/m);
    const { events } = await readJsonlLog(sessionFile(dir, id!));
    expect(events.filter((e) => e.type === 'turn/end').map((e) => (e as { turnId: string }).turnId)).toEqual(['turn-1', 'turn-2']);
    const short = await dsh(dir, ['log', id!]);
    const full = await dsh(dir, ['log', id!, '--full']);
    expect(short.out).not.toContain('pass --model provider:model for a real one');
    expect(full.out).toContain('pass --model provider:model for a real one');
    const json = await dsh(dir, ['log', id!, '--json']);
    expect(json.out.trim().split('\n').map((l) => LogEventSchema.parse(JSON.parse(l)).seq)).toEqual(events.map((e) => e.seq));
    expect((await dsh(dir, ['resume', 'nope', 'x'])).err).toMatch(/no session nope/);
  }, HANG);

  it('SIGKILL mid-batch, then resume: every tool/call is paired (the killed ones INTERRUPTED) and nothing committed is lost', async () => {
    const dir = workspace({ 'a.txt': 'alpha\n' });
    const script = join(dir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        { toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }, { toolName: 'bash', input: { command: 'sleep 60' } }, { toolName: 'glob', input: { pattern: '*' } }] },
        { text: 'never reached' },
      ]),
    );
    const run = startDsh(dir, ['run', 'go', '--model', `scripted:${script}`, '--allow', 'bash']);
    // Wait until the read's result is committed (it carries the three tool/calls to disk) and bash runs.
    const file = await waitFor(() => existsSync(join(dir, '.dsh', 'sessions')) && sessionIds(dir)[0] && sessionFile(dir, sessionIds(dir)[0]!), 'the session file');
    await waitFor(() => readFileSync(file, 'utf8').includes('"type":"tool/result"'), 'the committed read result');
    await new Promise((r) => setTimeout(r, 300));
    run.child.kill('SIGKILL');
    const killed = await run.done;
    expect(killed.signal).toBe('SIGKILL');
    const before = readFileSync(file, 'utf8');
    const committed = before.slice(0, before.lastIndexOf('\n') + 1);
    const beforeEvents = (await readJsonlLog(file)).events;
    expect(beforeEvents.filter((e) => e.type === 'tool/call')).toHaveLength(3);

    writeFileSync(script, JSON.stringify([{ text: 'carrying on' }]));
    const resumed = await dsh(dir, ['resume', sessionIds(dir)[0]!, 'go on', '--model', `scripted:${script}`]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.err).toMatch(/resumed an interrupted session: 2 call\(s\) marked INTERRUPTED, 1 step\(s\) and 1 turn\(s\) closed/);
    const after = readFileSync(file, 'utf8');
    expect(after.startsWith(committed)).toBe(true);
    const { events } = await readJsonlLog(file);
    expectPaired(events);
    const interrupted = events.filter((e) => e.type === 'tool/result' && e.result.error?.code === 'INTERRUPTED').map((e) => (e as { toolName: string }).toolName);
    expect(interrupted.sort()).toEqual(['bash', 'glob']);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', turnId: 'turn-2', outcome: 'completed' });
  }, HANG);

  it('--inspect: a kill sent the moment it says the run has ended (and that Ctrl-C stops it) is a clean stop, exit 0', async () => {
    const dir = workspace({ 'a.txt': 'alpha\n' });
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] }, { text: 'done' }]));
    const run = startDsh(dir, ['run', 'go', '--inspect', '--model', `scripted:${script}`]);
    await waitFor(() => run.out().includes('the run has ended'), 'the end of the run');
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.signal, r.err).toBeNull();
    expect(r.code, r.err).toBe(0);
    const { events } = await readJsonlLog(sessionFile(dir, sessionIds(dir)[0]!));
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);

  it('Ctrl-C (SIGINT) cancels the running turn cleanly: exit 130, the call aborted, the turn cancelled, the log well-formed', async () => {
    const dir = workspace({ 'a.txt': 'alpha\n' });
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command: 'sleep 60' } }] }, { text: 'never' }]));
    const run = startDsh(dir, ['run', 'go', '--model', `scripted:${script}`, '--allow', 'bash']);
    await waitFor(() => run.out().includes('tool/call call-1-0 bash'), 'the bash call');
    await new Promise((r) => setTimeout(r, 300));
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.err).toBe(130);
    const { events } = await readJsonlLog(sessionFile(dir, sessionIds(dir)[0]!));
    expectPaired(events);
    // ABORTED once the body runs (the usual case here); ABORTED_BEFORE_DISPATCH if the signal came first.
    const result = events.find((e) => e.type === 'tool/result') as { result: { error?: { code: string } } };
    expect(result.result.error?.code).toMatch(/^ABORTED(_BEFORE_DISPATCH)?$/);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'cancelled' });
  }, HANG);

  it('a corrupt log: log, resume and sessions say where, exit 1; repair asks (no terminal: --yes), backs up, cuts, and the log validates again', async () => {
    const dir = workspace();
    expect((await dsh(dir, ['run', '--model', 'embedded', 'first'])).code).toBe(0);
    const [id] = sessionIds(dir);
    const file = sessionFile(dir, id!);
    const good = readFileSync(file, 'utf8');
    const lines = good.trimEnd().split('\n');
    // Corrupt a line in the middle (a line without a checksum after checksummed ones).
    const bad = [...lines.slice(0, 5), '{"seq": 6, "type": "tool/call", "oops"', ...lines.slice(6)].join('\n') + '\n';
    writeFileSync(file, bad);
    const log = await dsh(dir, ['log', id!]);
    expect(log.code).toBe(1);
    expect(log.err.trim().split('\n')).toHaveLength(1);
    expect(log.err).toContain(`${file}:6: MISSING_CHECKSUM`);
    const resume = await dsh(dir, ['resume', id!, 'x']);
    expect(resume.code).toBe(1);
    expect(resume.err).toMatch(/:6: MISSING_CHECKSUM.*dsh repair/);
    expect((await dsh(dir, ['sessions'])).out).toMatch(new RegExp(`${id}.*corrupt: .*:6: MISSING_CHECKSUM`));

    const refused = await dsh(dir, ['repair', id!]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/cutting at line 6 \(byte \d+\) drops \d+ bytes: \d+ line\(s\)/);
    expect(refused.err).toMatch(/not cut .*--yes/);
    expect(readFileSync(file, 'utf8')).toBe(bad);

    const fixed = await dsh(dir, ['repair', id!, '--yes']);
    expect(fixed.code, fixed.err).toBe(0);
    const backup = /backup: (\S+)/.exec(fixed.out)?.[1];
    expect(readFileSync(backup!, 'utf8')).toBe(bad);
    expect(readFileSync(file, 'utf8')).toBe(lines.slice(0, 5).join('\n') + '\n');
    expect((await readJsonlLog(file)).events).toHaveLength(5);
    expect((await dsh(dir, ['repair', id!])).out).toMatch(/5 events, nothing to repair/);

    // A torn tail is reported, and cut on request.
    appendFileSync(file, '{"seq":6,"ty');
    const torn = await dsh(dir, ['repair', id!, '--yes']);
    expect(torn.out).toMatch(/torn last line/);
    expect(readFileSync(file, 'utf8')).toBe(lines.slice(0, 5).join('\n') + '\n');
  }, HANG);
});
