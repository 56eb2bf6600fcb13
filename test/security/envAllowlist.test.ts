// dsh issue 31 item 5 (SPEC §10.8): the command's environment is an allowlist. dsh's own
// environment holds the six secrets the issue found in bash (none has KEY/TOKEN/SECRET in its
// name); a real bash call in the sandbox sees none of them, and sees a name the config passes.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeBwrap } from '../../src/adapters/sandbox/bwrapProbe.js';
import { removeWorlds, runBashCalls, worldDir } from './sandboxAttack.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`envAllowlist.test.ts: the sandboxed run is skipped: no sandbox here (${probe.reason}); CI never skips it`);
afterAll(removeWorlds);

const T = randomBytes(6).toString('hex');
const LEAKS = {
  OTEL_EXPORTER_OTLP_HEADERS: `x-honeycomb-team=${T}-otel`,
  SENTRY_DSN: `https://${T}-sentry@o1.ingest.sentry.io/1`,
  HTTPS_PROXY: `http://user:${T}-proxy@proxy.example:3128`,
  REDIS_URL: `redis://:${T}-redis@cache:6379`,
  GH_PAT: `ghp_${T}-pat`,
  DB_PW: `${T}-dbpw`,
};

async function seen(mode: 'workspace-write' | 'full-access') {
  const base = await worldDir('dsh-env-');
  const ws = join(base, 'ws');
  await mkdir(ws);
  const env = { PATH: process.env.PATH, HOME: base, LANG: 'C.UTF-8', LC_CTYPE: 'C.UTF-8', TERM: 'xterm', ...LEAKS, TEAM_NAME: `team-${T}` };
  const [r] = await runBashCalls({ mode, root: ws, env, settings: { passEnv: ['TEAM_NAME'] }, commands: ['env; tr "\\0" "\\n" < /proc/1/environ'] });
  return r!.content;
}

function expectAllowlisted(out: string) {
  for (const [name, value] of Object.entries(LEAKS)) {
    expect(out, name).not.toContain(value);
    expect(out, name).not.toMatch(new RegExp(`^${name}=`, 'm'));
  }
  expect(out).toContain(`TEAM_NAME=team-${T}`);
  expect(out).toMatch(/^PATH=/m);
  expect(out).toMatch(/^LC_CTYPE=C\.UTF-8$/m);
}

describe('the command environment is an allowlist', () => {
  it.skipIf(skip)('workspace-write: none of the six reaches bash; the passEnv name does', async () => {
    expectAllowlisted(await seen('workspace-write'));
  }, 120_000);

  it('full-access: the same environment (the allowlist does not depend on the sandbox)', async () => {
    expectAllowlisted(await seen('full-access'));
  }, 120_000);
});
