// The hint printed after a run names a command that works where the user is: `dsh` for an installed
// package, `npm run dsh --` under `npm start` / `npm run dsh` in dsh's own checkout (no `dsh` on the PATH there).
import { describe, expect, it } from 'vitest';
import { dshCommandHint } from '../../src/cli/run/runSession.js';
import { USAGE } from '../../src/cli/main.js';

describe('how to run dsh again', () => {
  it('npm start and npm run dsh in the checkout: npm run dsh --; anywhere else: dsh', () => {
    expect(dshCommandHint({ npm_package_name: 'dsh', npm_lifecycle_event: 'start' })).toBe('npm run dsh --');
    expect(dshCommandHint({ npm_package_name: 'dsh', npm_lifecycle_event: 'dsh' })).toBe('npm run dsh --');
    expect(dshCommandHint({ npm_package_name: 'my-app', npm_lifecycle_event: 'start' })).toBe('dsh');
    expect(dshCommandHint({})).toBe('dsh');
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
