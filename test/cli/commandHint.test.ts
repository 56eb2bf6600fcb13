// The hint printed after a run names a command that works where the user is: `dsh` when the `dsh` on
// the PATH is this program, `npx dsh` otherwise, `npm run dsh --` under `npm start` / `npm run dsh` in dsh's own checkout (no `dsh` on the PATH there).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dshCommandHint } from '../../src/cli/run/runSession.js';
import { USAGE } from '../../src/cli/main.js';

describe('how to run dsh again', () => {
  it('npm start and npm run dsh in the checkout: npm run dsh --; dsh where a dsh on the PATH is this program; else (npx, no dsh on the PATH) npx dsh (issue 32 item 7)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-hint-'));
    try {
      const bin = join(dir, 'pkg', 'bin.js');
      mkdirSync(join(dir, 'pkg'));
      mkdirSync(join(dir, 'bin'));
      writeFileSync(bin, '');
      symlinkSync(bin, join(dir, 'bin', 'dsh'));
      const path = ['relative/bin', '/nonexistent', join(dir, 'bin')].join(delimiter);
      expect(dshCommandHint({ npm_package_name: 'dsh', npm_lifecycle_event: 'start' }, bin)).toBe('npm run dsh --');
      expect(dshCommandHint({ npm_package_name: 'dsh', npm_lifecycle_event: 'dsh' }, bin)).toBe('npm run dsh --');
      expect(dshCommandHint({ npm_package_name: 'my-app', npm_lifecycle_event: 'start', PATH: path }, bin)).toBe('dsh');
      expect(dshCommandHint({ PATH: path }, bin)).toBe('dsh');
      // Another dsh on the PATH, or none: this one is reached through npx.
      expect(dshCommandHint({ PATH: '/usr/bin' }, bin)).toBe('npx dsh');
      expect(dshCommandHint({}, bin)).toBe('npx dsh');
      // Under npx the package's bin is on this process's PATH only.
      expect(dshCommandHint({ PATH: path, npm_command: 'exec' }, bin)).toBe('npx dsh');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('dsh --help lists --base-url and --suspend (run and resume)', () => {
    const run = USAGE.split('\n').find((l) => l.includes('dsh run ['))!;
    const resume = USAGE.split('\n').find((l) => l.includes('dsh resume '))!;
    for (const line of [run, resume]) {
      expect(line).toContain('--base-url URL');
      expect(line).toContain('--suspend');
    }
  });
});
