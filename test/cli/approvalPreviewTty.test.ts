// `dsh run` on a real terminal (a tmux pane) against a loopback OpenAI-compatible server: an `edit`
// approval shows its diff (coloured, unless NO_COLOR), `r` + a typed reason denies it and the
// reason reaches the model's next request; the REPL's /help is dsh's, not the model's. Needs tmux.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { openAiChatReply } from '../model/wire/openaiChat.js';
import { dshArgv, waitFor } from './spawnDsh.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-preview-${process.pid}`;
const dirs: string[] = [];
let server: LoopbackServer;
beforeAll(async () => {
  server = await startLoopbackServer();
});
afterAll(async () => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-preview-'));
  dirs.push(dir);
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\ngamma\n');
  return dir;
}

/** Starts `dsh ARGS` in a tmux pane; `see` waits for the screen (with escapes, `-e`, when asked). */
function pane(name: string, dir: string, args: string[], env: Record<string, string> = {}) {
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-xdg-'));
  dirs.push(xdg);
  const vars = Object.entries({ XDG_CONFIG_HOME: xdg, ...env }).map(([k, v]) => `${k}=${q(v)}`).join(' ');
  tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '50', '-c', dir, `env ${vars} ${dshArgv(...args).map(q).join(' ')}; echo "exit=$?"; sleep 600`);
  const shot = (escapes = false) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', name);
  const see = (re: RegExp, what: string, escapes = false) => waitFor(() => re.test(shot(escapes)) && shot(escapes), what, 90_000);
  return { shot, see, keys: (...k: string[]) => tmux('send-keys', '-t', name, ...k) };
}

describe.skipIf(!hasTmux)('approval previews on a terminal', () => {
  it('an edit approval shows the diff in colour; r + a typed reason denies it and the reason is in the next request', async () => {
    const dir = workspace();
    const before = server.requests.length;
    server.reply(
      openAiChatReply({ text: ['Reading.'], toolCalls: [{ id: 'c1', name: 'read', arguments: JSON.stringify({ path: 'a.txt' }) }] }),
      openAiChatReply({ text: ['Editing.'], toolCalls: [{ id: 'c2', name: 'edit', arguments: JSON.stringify({ path: 'a.txt', oldString: 'beta', newString: 'BETA' }) }] }),
      openAiChatReply({ text: ['Understood, I will not shout.'] }),
    );
    const p = pane('edit', dir, ['run', 'make beta loud', '--model', 'openai-compatible:m', '--base-url', server.url]);
    const screen = await p.see(/\[r\] deny with a reason/, 'the edit question');
    expect(screen).toMatch(/\? allow edit a\.txt/);
    expect(screen).toMatch(/^ {2}--- a\/a\.txt\n {2}\+\+\+ b\/a\.txt\n {2}@@ -1,3 \+1,3 @@\n {3}alpha\n {2}-beta\n {2}\+BETA\n {3}gamma$/m);
    // Coloured: the removed line red, the added one green.
    const coloured = p.shot(true);
    expect(coloured).toMatch(/\x1b\[31m {2}-beta/);
    expect(coloured).toMatch(/\x1b\[32m {2}\+BETA/);
    p.keys('r');
    await p.see(/deny, because›/, 'the reason prompt');
    p.keys('-l', 'keep it lowercase please');
    await p.see(/deny, because› keep it lowercase please/, 'the typed reason');
    p.keys('Enter');
    await p.see(/exit=0/, 'the exit');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
    expect(server.requests).toHaveLength(before + 3);
    const tool = (server.requests[before + 2]!.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>).find((m) => m.role === 'tool' && m.tool_call_id === 'c2');
    expect(String(tool?.content)).toContain('approval denied: keep it lowercase please');
    tmux('kill-session', '-t', 'edit');
  }, 180_000);

  it('NO_COLOR: the same diff without colours', async () => {
    const dir = workspace();
    server.reply(
      openAiChatReply({ toolCalls: [{ id: 'w1', name: 'write', arguments: JSON.stringify({ path: 'new.txt', content: 'one\ntwo\n' }) }] }),
      openAiChatReply({ text: ['ok'] }),
    );
    const p = pane('nocolor', dir, ['run', 'write it', '--model', 'openai-compatible:m', '--base-url', server.url], { NO_COLOR: '1' });
    await p.see(/\[n\] deny/, 'the write question');
    const coloured = p.shot(true);
    expect(coloured).toMatch(/^ {2}--- \/dev\/null\n {2}\+\+\+ b\/new\.txt\n {2}@@ -0,0 \+1,2 @@\n {2}\+one\n {2}\+two$/m);
    expect(coloured).not.toMatch(/\x1b\[3[12]m/);
    p.keys('n');
    await p.see(/exit=0/, 'the exit');
    tmux('kill-session', '-t', 'nocolor');
  }, 180_000);

  it("the REPL's /help lists dsh's commands and sends nothing to the model; /exit right away leaves no session", async () => {
    const dir = workspace();
    const before = server.requests.length;
    const p = pane('help', dir, ['run', '--model', 'openai-compatible:m', '--base-url', server.url]);
    await p.see(/^dsh>\s*$/m, 'the prompt');
    p.keys('/help', 'Enter');
    const screen = await p.see(/\/exit +leave/, 'the help');
    expect(screen).toMatch(/\/help +this list/);
    expect(screen).toMatch(/r deny with a reason/);
    p.keys('/frob', 'Enter');
    await p.see(/unknown command \/frob \(not sent to the model; \/help lists the commands\)/, 'the unknown command');
    p.keys('/exit', 'Enter');
    await p.see(/exit=0/, 'the exit');
    expect(server.requests).toHaveLength(before);
    expect(spawnSync('sh', ['-c', `ls ${q(join(dir, '.dsh', 'sessions'))}/*.jsonl 2>/dev/null | wc -l`], { encoding: 'utf8' }).stdout.trim()).toBe('0');
    tmux('kill-session', '-t', 'help');
  }, 180_000);

  it('Ctrl-C at the prompt leaves, and the closing line starts on a line of its own', async () => {
    const dir = workspace();
    server.reply(openAiChatReply({ text: ['hi there'] }));
    const p = pane('ctrlc', dir, ['run', '--model', 'openai-compatible:m', '--base-url', server.url]);
    await p.see(/^dsh>\s*$/m, 'the prompt');
    p.keys('hello', 'Enter');
    await p.see(/turn completed[\s\S]*^dsh>\s*$/m, 'the turn done, the prompt again');
    p.keys('C-c');
    const screen = await p.see(/exit=0/, 'the exit');
    expect(screen).toMatch(/^session log: /m);
    expect(screen).not.toMatch(/dsh> session log/);
    tmux('kill-session', '-t', 'ctrlc');
  }, 180_000);
});
