// Issue 32 item 2 on a real terminal (tmux): with `bash.deny: ["^ls\\b"]` in the project's config,
// `ls && node test.js` is denied before anyone is asked. The screen never shows the question; the
// row shows POLICY_DENIED and the rule that decided. Needs tmux.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { openAiChatReply } from '../model/wire/openaiChat.js';
import { dshArgv, waitFor } from './spawnDsh.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-denyfirst-${process.pid}`;
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

describe.skipIf(!hasTmux)('deny before ask, on a terminal', () => {
  it('a command a bash.deny pattern refuses is never asked about', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-denyfirst-'));
    const xdg = mkdtempSync(join(tmpdir(), 'dsh-xdg-'));
    dirs.push(dir, xdg);
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify({ bash: { deny: [{ pattern: '^ls\\b' }] } }));
    server.reply(
      openAiChatReply({ text: ['Testing.'], toolCalls: [{ id: 'c1', name: 'bash', arguments: JSON.stringify({ command: 'ls && node test.js' }) }] }),
      openAiChatReply({ text: ['I see.'] }),
    );
    const args = ['run', 'run the tests', '--model', 'openai-compatible:m', '--base-url', server.url];
    tmux('new-session', '-d', '-s', 'deny', '-x', '140', '-y', '40', '-c', dir, `env XDG_CONFIG_HOME=${q(xdg)} ${dshArgv(...args).map(q).join(' ')}; echo "exit=$?"; sleep 600`);
    const shot = () => tmux('capture-pane', '-p', '-t', 'deny');
    const screen = await waitFor(() => /exit=\d+/.test(shot()) && shot(), 'the exit', 90_000);
    expect(screen).toContain('exit=0');
    expect(screen).not.toContain('? allow');
    expect(screen).toMatch(/^✗ bash ls && node test\.js {2}POLICY_DENIED/m);
    expect(screen).toContain('decided: pre-execute deny by dsh:bash-commands (bash.deny[0] /^ls\\b/)');
    // The message names the file the rule came from (the project's, not "the user's configuration").
    expect(screen.replace(/\s+/g, ' ')).toContain('matches the deny pattern /^ls\\b/ of dsh.config.json');
    tmux('kill-session', '-t', 'deny');
  }, 180_000);
});
