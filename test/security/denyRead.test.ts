// dsh issue 31 item 8 (SPEC §10.8): secrets are not readable by default. A fake home holds
// `~/.ssh/id_rsa`, `~/.aws/credentials`, `~/.npmrc`, `~/.config/gh/hosts.yml`, and the workspace
// lies under that home; a real sandboxed bash call cannot read any of them (nor list them), while
// the workspace stays readable and writable. `sandbox.denyRead` hides one more path and
// `sandbox.allowRead` shows one back. The full-access run shows the files are there to read.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { denyReadPlan } from '../../src/adapters/sandbox/denyRead.js';
import { mergeConfigs } from '../../src/config/load.js';
import { removeWorlds, runBashCalls, worldDir } from './sandboxAttack.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`denyRead.test.ts: the sandboxed runs are skipped: no sandbox here (${probe.reason}); CI never skips them`);
afterAll(removeWorlds);

const T = randomBytes(6).toString('hex');
const PLANTED = {
  '.ssh/id_rsa': `-----BEGIN OPENSSH PRIVATE KEY----- ${T}-ssh`,
  '.aws/credentials': `[default]\naws_secret_access_key = ${T}-aws`,
  '.npmrc': `//registry.npmjs.org/:_authToken=${T}-npm`,
  '.config/gh/hosts.yml': `github.com:\n  oauth_token: ${T}-gh`,
  'private/notes.txt': `${T}-private`,
};

async function world() {
  const home = await worldDir('dsh-denyread-');
  for (const [rel, text] of Object.entries(PLANTED)) {
    await mkdir(join(home, rel, '..'), { recursive: true });
    await writeFile(join(home, rel), `${text}\n`);
  }
  const ws = join(home, 'code', 'ws');
  await mkdir(ws, { recursive: true });
  await writeFile(join(ws, 'readme.txt'), 'inside\n');
  return { home, ws };
}

const CAT = `for f in ~/.ssh/id_rsa ~/.aws/credentials ~/.npmrc ~/.config/gh/hosts.yml ~/private/notes.txt; do cat "$f" 2>&1; done; ls -A ~/.ssh ~/.aws; cat readme.txt; echo written > out.txt && cat out.txt`;

describe('credential files are not readable in the sandbox', () => {
  it.skipIf(skip)('workspace-write: the planted credentials are masked; the workspace under the same home is readable and writable', async () => {
    const { home, ws } = await world();
    const [r] = await runBashCalls({ mode: 'workspace-write', root: ws, env: { PATH: process.env.PATH, HOME: home }, commands: [CAT] });
    const out = r!.content;
    for (const rel of ['.ssh/id_rsa', '.aws/credentials', '.npmrc', '.config/gh/hosts.yml']) expect(out, rel).not.toContain(`${T}-${rel === '.ssh/id_rsa' ? 'ssh' : rel === '.aws/credentials' ? 'aws' : rel === '.npmrc' ? 'npm' : 'gh'}`);
    expect(out).toContain(`${T}-private`); // not on the list: readable (the next test hides it)
    expect(out).toContain('inside\n');
    expect(out).toContain('written\n');
    expect(await readFile(join(ws, 'out.txt'), 'utf8')).toBe('written\n');
    // The host files are untouched.
    expect(await readFile(join(home, '.ssh', 'id_rsa'), 'utf8')).toBe(`${PLANTED['.ssh/id_rsa']}\n`);
  }, 120_000);

  it.skipIf(skip)('Unix sockets: none answers by default (socket(AF_UNIX) fails); with unixSockets: true, one beside the workspace does, a docker-style one under the home still does not (masked)', async () => {
    const { home, ws } = await world();
    const { createServer } = await import('node:net');
    await mkdir(join(home, '.docker', 'desktop'), { recursive: true });
    const servers = [join(home, '.docker', 'desktop', 'docker.sock'), join(home, 'code', 'beside.sock')].map((path) => {
      const server = createServer((c) => c.end('answered\n'));
      return new Promise<typeof server>((r) => server.listen(path, () => r(server)));
    });
    const up = await Promise.all(servers);
    try {
      await writeFile(join(ws, 'probe.cjs'), "const p = process.argv[2]; require('net').connect(p).on('data', (d) => process.stdout.write(p + ': ' + d)).on('error', (e) => console.log(p + ': ' + e.code));\n");
      const probe = (p: string) => `node probe.cjs ${p}`;
      const commands = [`${probe('~/.docker/desktop/docker.sock')}; ${probe('../beside.sock')}; python3 -c 'import socket; a, b = socket.socketpair(); a.send(b"p"); print("pair", b.recv(1))'`];
      const [blocked] = await runBashCalls({ mode: 'workspace-write', root: ws, env: { PATH: process.env.PATH, HOME: home }, commands });
      expect(blocked!.content).toMatch(/docker\.sock: EACCES/);
      expect(blocked!.content).toMatch(/beside\.sock: EACCES/);
      expect(blocked!.content).toContain("pair b'p'"); // socketpair still works
      const [allowed] = await runBashCalls({ mode: 'workspace-write', root: ws, env: { PATH: process.env.PATH, HOME: home }, settings: { unixSockets: true }, commands });
      expect(allowed!.content).toMatch(/docker\.sock: E(NOENT|CONNREFUSED|ACCES)/);
      expect(allowed!.content).toContain('beside.sock: answered');
    } finally {
      await Promise.all(up.map((s) => new Promise((r) => s.close(r))));
    }
  }, 120_000);

  it.skipIf(skip)('sandbox.denyRead hides one more path; sandbox.allowRead shows one back', async () => {
    const { home, ws } = await world();
    const [r] = await runBashCalls({
      mode: 'read-only',
      root: ws,
      env: { PATH: process.env.PATH, HOME: home },
      settings: { denyRead: ['~/private'], allowRead: ['~/.npmrc'] },
      commands: [CAT],
    });
    expect(r!.content).not.toContain(`${T}-private`);
    expect(r!.content).toContain(`${T}-npm`);
    expect(r!.content).not.toContain(`${T}-ssh`);
    expect(r!.content).toContain('inside\n');
  }, 120_000);

  it('full-access: the same command reads them (the checks above can fail)', async () => {
    const { home, ws } = await world();
    const [r] = await runBashCalls({ mode: 'full-access', root: ws, env: { PATH: process.env.PATH, HOME: home }, commands: [CAT] });
    for (const tag of ['ssh', 'aws', 'npm', 'gh']) expect(r!.content).toContain(`${T}-${tag}`);
  }, 120_000);
});

describe('denyReadPlan and the config', () => {
  const kinds: Record<string, 'dir' | 'file'> = { '/h/.ssh': 'dir', '/h/.ssh/x': 'file', '/h/.npmrc': 'file', '/etc/shadow': 'file', '/root': 'dir', '/h/.aws': 'dir', '/h/extra': 'dir' };
  const kindOf = (p: string) => kinds[p] ?? 'missing';

  it('masks only what exists, never the workspace or a directory holding it, children of a masked dir folded', () => {
    expect(denyReadPlan({ home: '/h', root: '/w', kindOf, deny: ['~/extra', '/h/.ssh/x'] })).toEqual({ dirs: ['/h/.ssh', '/h/.aws', '/root', '/h/extra'].sort((a, b) => a.length - b.length), files: ['/h/.npmrc', '/etc/shadow'] });
    const underRoot = denyReadPlan({ home: '/h', root: '/root/ws', kindOf });
    expect(underRoot.dirs).not.toContain('/root');
    const wsIsSsh = denyReadPlan({ home: '/h', root: '/h/.ssh', kindOf });
    expect(wsIsSsh.dirs).not.toContain('/h/.ssh');
    expect(denyReadPlan({ home: '/root', root: '/w', kindOf }).dirs).not.toContain('/root');
    expect(denyReadPlan({ home: '/h', root: '/w', kindOf, allow: ['~/.npmrc'] }).files).toEqual(['/etc/shadow']);
  });

  it('a project file can add to denyRead, never allowRead or unixSockets: true (the user file can)', () => {
    const m = mergeConfigs({ sandbox: { denyRead: ['~/a'] } }, { sandbox: { denyRead: ['~/b'], allowRead: ['~/.ssh'], unixSockets: true } });
    expect(m.sandbox).toEqual({ denyRead: ['~/a', '~/b'] });
    expect(mergeConfigs({ sandbox: { unixSockets: true } }, {}).sandbox).toEqual({ unixSockets: true });
    expect(mergeConfigs({ sandbox: { unixSockets: true } }, { sandbox: { unixSockets: false } }).sandbox).toEqual({});
    expect(mergeConfigs({ sandbox: { allowRead: ['~/.npmrc'] } }, {}).sandbox).toEqual({ allowRead: ['~/.npmrc'] });
  });
});
