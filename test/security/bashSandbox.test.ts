// dsh issue 23 items 1, 2, 5 (SPEC §10.2, §10.3): every escape the issue lists, run as a real
// `bash` call in each sandbox mode by a dsh process that holds secrets in its environment. With
// the default (`workspace-write`): 0 writes outside the workspace (its private /tmp excepted),
// 0 changes to the protected paths, 0 connections to a loopback listener, 0 secrets seen, and a
// write inside works. `read-only` refuses the write inside too. `full-access` confines nothing
// but the environment, and the same attacks succeed there: the checks below can fail.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import type { SandboxMode } from '../../src/adapters/sandbox/sandbox.js';
import type { ToolResult } from '../../src/protocol/index.js';

const TOKEN = randomBytes(6).toString('hex');
const SECRETS = { OPENAI_API_KEY: `sk-test-${TOKEN}-openai`, DEPLOY_TOKEN: `tok-${TOKEN}-deploy`, DB_PASSWORD: `pw-${TOKEN}-db` };
const HOST_TMP_FILE = join(tmpdir(), `dsh-attack-${TOKEN}`);

const probe = await probeBwrap();
// Skips only on a machine without a usable bubblewrap, and never under CI.
const skipSandboxed = !probe.ok && process.env.CI === undefined;
if (skipSandboxed) console.warn(`bashSandbox.test.ts: the read-only and workspace-write attacks are skipped: no sandbox here (${probe.reason}); CI never skips them`);

let listener: Server;
let port = 0;
let connections = 0;
beforeAll(async () => {
  listener = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  port = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => listener.close(() => r()));
  await rm(HOST_TMP_FILE, { force: true });
});

/**
 * Outside /tmp, which the sandbox replaces by a private one (and with it everything under it):
 * the attacks must meet the read-only host, as a workspace under a home directory would.
 */
const worlds: string[] = [];
afterAll(async () => {
  await Promise.all(worlds.map((d) => rm(d, { recursive: true, force: true })));
});
async function worldDir(): Promise<string> {
  const d = await mkdtemp(join('/var/tmp', 'dsh-sbx-'));
  worlds.push(d);
  return d;
}

/** A workspace with its protected files, a victim outside it, and a home of its own. */
async function world() {
  const base = await worldDir();
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  const home = join(base, 'home');
  await mkdir(join(ws, '.dsh', 'sessions'), { recursive: true });
  await mkdir(join(ws, '.git', 'hooks'), { recursive: true });
  await mkdir(outside);
  await mkdir(join(home, '.config', 'dsh'), { recursive: true });
  const files = {
    log: [join(ws, '.dsh', 'sessions', 's1.jsonl'), '{"type":"session/start"}\n'],
    config: [join(ws, 'dsh.config.json'), '{"bash":{"deny":["^rm\\\\s"]}}\n'],
    gitConfig: [join(ws, '.git', 'config'), '[core]\n\tbare = false\n'],
    userConfig: [join(home, '.config', 'dsh', 'config.json'), '{"plan":true}\n'],
    victim: [join(outside, 'victim.txt'), 'original\n'],
  } as const;
  for (const [path, text] of Object.values(files)) await writeFile(path, text);
  return { base, ws, outside, home, files };
}

async function attack(mode: SandboxMode, root: string, home: string, commands: string[]): Promise<ToolResult[]> {
  const host = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./bashSandboxHost.ts', import.meta.url))], {
    env: { ...process.env, ...SECRETS, HOME: home, XDG_CONFIG_HOME: '', DSH_SBX_ROOT: root, DSH_SBX_MODE: mode, DSH_SBX_COMMANDS: JSON.stringify(commands) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  host.stdout.on('data', (c: Buffer) => (out += c.toString()));
  host.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((r) => host.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`the attack host exited ${code}: ${err}`);
  return JSON.parse(out) as ToolResult[];
}

const text = (r: ToolResult) => r.content;

/** Every escape of the issue, one bash call each; the world is checked afterwards. */
function escapes(w: Awaited<ReturnType<typeof world>>) {
  return [
    /* 0 */ 'echo pwned > ../outside/relative.txt',
    /* 1 */ `echo pwned > ${w.outside}/absolute.txt`,
    /* 2 */ 'echo pwned > "$HOME/home.txt"; echo pwned >> "$HOME/.config/dsh/config.json"',
    /* 3 */ `echo pwned > ${HOST_TMP_FILE}`,
    /* 4 */ `ln -s ${w.outside}/victim.txt link && echo pwned >> link; ln -s ../outside dirlink && echo pwned > dirlink/through-dirlink.txt`,
    /* 5 */ 'echo \'{"type":"forged"}\' >> .dsh/sessions/s1.jsonl; rm -f .dsh/sessions/s1.jsonl; mv .dsh .dsh-old; rm -rf .dsh',
    /* 6 */ 'echo \'{}\' > dsh.config.json; rm -f dsh.config.json; mv dsh.config.json gone.json',
    /* 7 */ 'umount .git/hooks; mount -o remount,rw,bind .git/hooks; unshare -U -r -m sh -c "umount .git/hooks"; echo evil > .git/hooks/pre-commit; echo "[core] fsmonitor = evil" >> .git/config; mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit',
    /* 8 */ `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`,
    /* 9 */ 'env; tr "\\0" "\\n" < /proc/1/environ; tr "\\0" "\\n" < /proc/$PPID/environ; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"',
    /* 10 */ 'echo ok > inside.txt && cat inside.txt',
    /* 11 */ 'echo private > /tmp/own.txt && cat /tmp/own.txt && echo "$TMPDIR"',
  ];
}

async function untouched(w: Awaited<ReturnType<typeof world>>, keys: (keyof typeof w.files)[]) {
  for (const k of keys) {
    const [path, want] = w.files[k];
    expect(await readFile(path, 'utf8').catch((e: Error) => `missing: ${e.message}`), k).toBe(want);
  }
}

function noSecret(r: ToolResult) {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text(r), name).not.toContain(value);
    expect(text(r), name).not.toContain(`${name}=`);
  }
}

describe.skipIf(skipSandboxed)('bash in its sandbox: the issue 23 escapes fail', () => {
  it('workspace-write (the default): 0 writes outside, 0 protected changes, 0 connections, 0 secrets; a write inside works', async () => {
    const w = await world();
    const before = connections;
    const r = await attack('workspace-write', w.ws, w.home, escapes(w));
    expect(r.every((x) => !x.isError), JSON.stringify(r.filter((x) => x.isError))).toBe(true);
    expect(r.every((x) => (x.metadata as { sandbox?: string }).sandbox === 'workspace-write')).toBe(true);
    // Outside: nothing new, nothing changed.
    expect(readdirSync(w.outside)).toEqual(['victim.txt']);
    expect(readdirSync(w.home)).toEqual(['.config']);
    expect(existsSync(HOST_TMP_FILE)).toBe(false);
    await untouched(w, ['victim', 'userConfig', 'log', 'config', 'gitConfig']);
    expect(readdirSync(join(w.ws, '.git', 'hooks'))).toEqual([]);
    expect(existsSync(join(w.ws, '.dsh-old')) || existsSync(join(w.ws, '.git-old')) || existsSync(join(w.ws, 'gone.json'))).toBe(false);
    for (const i of [0, 1, 2, 4, 5]) expect(text(r[i]!), `attack ${i}`).toMatch(/Read-only file system/);
    expect(text(r[7]!)).toMatch(/Device or resource busy/);
    // Network: the listener saw nothing.
    expect(text(r[8]!)).not.toContain('connected');
    expect(connections - before).toBe(0);
    noSecret(r[9]!);
    expect(text(r[9]!)).toMatch(/^PATH=/m);
    // Inside works, and so does the private /tmp.
    expect(await readFile(join(w.ws, 'inside.txt'), 'utf8')).toBe('ok\n');
    expect(text(r[11]!)).toBe('private\n/tmp\n[exit code 0]');
  }, 120_000);

  it('read-only: the same, and the write inside fails too (the private /tmp still works)', async () => {
    const w = await world();
    const before = connections;
    const r = await attack('read-only', w.ws, w.home, escapes(w));
    expect(readdirSync(w.outside)).toEqual(['victim.txt']);
    expect(readdirSync(w.home)).toEqual(['.config']);
    expect(existsSync(HOST_TMP_FILE)).toBe(false);
    await untouched(w, ['victim', 'userConfig', 'log', 'config', 'gitConfig']);
    expect(readdirSync(join(w.ws, '.git', 'hooks'))).toEqual([]);
    expect(connections - before).toBe(0);
    noSecret(r[9]!);
    expect(existsSync(join(w.ws, 'inside.txt'))).toBe(false);
    expect(existsSync(join(w.ws, 'link'))).toBe(false);
    for (const i of [0, 1, 2, 4, 5, 10]) expect(text(r[i]!), `attack ${i}`).toMatch(/Read-only file system/);
    expect(text(r[11]!)).toBe('private\n/tmp\n[exit code 0]');
  }, 120_000);

  it('workspace-write: a protected path that did not exist is not left behind (dsh.config.json and a .git made by git init go to .dsh/quarantine)', async () => {
    const base = await worldDir();
    const ws = join(base, 'ws');
    await mkdir(ws);
    const r = await attack('workspace-write', ws, base, [
      'echo \'{"plan":false}\' > dsh.config.json && echo created',
      'git init -q . && echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && git config core.fsmonitor evil && echo initialised',
      'git -c user.email=a@b -c user.name=n commit -q --allow-empty -m one && git log --oneline | wc -l',
      'echo evil > .git/hooks/post-commit; git config core.fsmonitor evil2',
    ]);
    expect(text(r[0]!)).toMatch(/^created\n\[exit code 0\]\n\[sandbox: dsh\.config\.json is protected \(project-config\); what the command created there was moved to \.dsh\/quarantine\//);
    expect(existsSync(join(ws, 'dsh.config.json'))).toBe(false);
    expect(text(r[1]!)).toContain('initialised');
    // The whole repository the command made is moved aside: the host's git never reads its hooks
    // or config (SPEC §10.7); commits are the user's to make.
    expect(existsSync(join(ws, '.git'))).toBe(false);
    expect(text(r[2]!)).toMatch(/not a git repository/);
    const quarantined = readdirSync(join(ws, '.dsh', 'quarantine'));
    expect(quarantined.some((n) => n.includes('project-config-dsh.config.json'))).toBe(true);
    expect(quarantined.some((n) => n.includes('git-dir-.git'))).toBe(true);
  }, 120_000);
});

describe('bash in full-access: confinement is off by choice, secrets still withheld', () => {
  it('the escapes succeed (the checks above can fail), but no secret is seen', async () => {
    const w = await world();
    const before = connections;
    const r = await attack('full-access', w.ws, w.home, escapes(w));
    expect(r.every((x) => (x.metadata as { sandbox?: string }).sandbox === 'full-access')).toBe(true);
    expect(readdirSync(w.outside).sort()).toEqual(['absolute.txt', 'relative.txt', 'through-dirlink.txt', 'victim.txt']);
    expect(await readFile(w.files.victim[0], 'utf8')).toBe('original\npwned\n');
    expect(existsSync(HOST_TMP_FILE)).toBe(true);
    expect(text(r[8]!)).toContain('connected');
    expect(connections - before).toBe(1);
    noSecret(r[9]!);
  }, 120_000);
});
