// `dsh run` and the sandbox (issue 23 item 1): the run prints the mode in force, the default is
// workspace-write, `"sandbox"` in dsh.config.json chooses another, and a project file cannot
// loosen what the user file sets. Real processes from source, no terminal, no key.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { mergeConfigs, parseConfig } from '../../src/config/load.js';
import { dsh, testEnv } from './spawnDsh.js';
import { readdirSync } from 'node:fs';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Outside /tmp, as a project under a home directory is. */
function workspace(config?: unknown): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join('/var/tmp', 'dsh-runsbx-'));
  const xdg = mkdtempSync(join('/var/tmp', 'dsh-runsbx-xdg-'));
  dirs.push(dir, xdg);
  writeFileSync(join(dir, 'README.md'), '# app\n');
  if (config !== undefined) writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify(config));
  mkdirSync(join(xdg, 'dsh'));
  return { dir, env: testEnv({ XDG_CONFIG_HOME: xdg }) };
}

async function bashResult(dir: string) {
  const [name] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
  const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', name!));
  const id = events.find((e) => e.type === 'tool/call' && e.toolName === 'bash')!;
  return events.find((e) => e.type === 'tool/result' && e.callId === (id as { callId: string }).callId) as { result: { isError: boolean; metadata?: Record<string, unknown> } };
}

describe('dsh run: the sandbox in force', () => {
  it('a fresh project runs bash in workspace-write, and the run says so in one line', async () => {
    const { dir, env } = workspace();
    const r = await dsh(dir, ['run', 'go', '--model', 'embedded', '--allow', 'bash'], env);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split('\n').filter((l) => l.startsWith('sandbox: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sandbox: workspace-write \(bubblewrap\): writes only in the workspace and a private \/tmp.*; no network; secrets withheld \(environment allowlisted, credential files hidden\)$/);
    const res = await bashResult(dir);
    expect(res.result.isError).toBe(false);
    expect(res.result.metadata).toMatchObject({ sandbox: 'workspace-write', network: false });
  }, 120_000);

  it('"sandbox": { "mode": "read-only", "network": true } in dsh.config.json is what runs', async () => {
    const { dir, env } = workspace({ sandbox: { mode: 'read-only', network: true } });
    const r = await dsh(dir, ['run', 'go', '--model', 'embedded', '--allow', 'bash'], env);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^sandbox: read-only \(bubblewrap\): no writes except a private \/tmp; network allowed; secrets withheld \(environment allowlisted, credential files hidden\)$/m);
    expect((await bashResult(dir)).result.metadata).toMatchObject({ sandbox: 'read-only', network: true });
  }, 120_000);
});

describe('the "sandbox" config', () => {
  it('is validated: an unknown mode is an error naming the field', () => {
    expect(() => parseConfig('{"sandbox":{"mode":"none"}}', 'dsh.config.json')).toThrow(/dsh\.config\.json: sandbox\.mode: /);
    expect(() => parseConfig('{"sandbox":{"netwrok":true}}', 'dsh.config.json')).toThrow(/sandbox/);
    expect(parseConfig('{"sandbox":{"mode":"full-access","passEnv":["NPM_TOKEN"]}}', 'x').sandbox).toEqual({ mode: 'full-access', passEnv: ['NPM_TOKEN'] });
  });

  it('a project file cannot loosen the mode or turn on the network the user file set', () => {
    expect(mergeConfigs({ sandbox: { mode: 'read-only', network: false } }, { sandbox: { mode: 'full-access', network: true } }).sandbox).toEqual({ mode: 'read-only', network: false });
    expect(mergeConfigs({ sandbox: { mode: 'full-access' } }, { sandbox: { mode: 'workspace-write' } }).sandbox).toEqual({ mode: 'workspace-write' });
    expect(mergeConfigs({}, { sandbox: { network: true } }).sandbox).toEqual({ network: true });
    expect(mergeConfigs({ sandbox: { passEnv: ['A_TOKEN'] } }, { sandbox: { passEnv: ['B_KEY'] } }).sandbox).toEqual({ passEnv: ['A_TOKEN', 'B_KEY'] });
  });
});
