// Issue 32 item 2 on a real terminal (tmux): with `bash.deny: ["^ls\\b"]` in the project's config,
// `ls && node test.js` is denied before anyone is asked. The screen never shows the question; the
// row shows POLICY_DENIED and the rule that decided. Needs tmux.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { openAiChatReply } from '../model/wire/openaiChat.js';
import { hasTmux, tmuxServer } from './tmuxPane.js';

const tmux = tmuxServer('denyfirst');
const dirs: string[] = [];
let server: LoopbackServer;
beforeAll(async () => {
  server = await startLoopbackServer();
});
afterAll(async () => {
  tmux.kill();
  await server.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});


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
    const p = tmux.pane('deny', dir, args, { XDG_CONFIG_HOME: xdg }, [140, 40]);
    const screen = await p.see(/exit=\d+/, 'the exit');
    expect(screen).toContain('exit=0');
    expect(screen).not.toContain('? allow');
    expect(screen).toMatch(/^✗ bash ls && node test\.js {2}POLICY_DENIED/m);
    expect(screen).toContain('decided: pre-execute deny by dsh:bash-commands (bash.deny[0] /^ls\\b/)');
    // The message names the file the rule came from (the project's, not "the user's configuration").
    expect(screen.replace(/\s+/g, ' ')).toContain('matches the deny pattern /^ls\\b/ of dsh.config.json');
    p.close();
  }, 180_000);
});
