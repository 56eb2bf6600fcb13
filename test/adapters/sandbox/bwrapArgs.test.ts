// The bubblewrap command line (bwrapArgs.ts): the masks, covers and seccomp filter come after
// every bind (a mount over a path must come after the mount it covers), before `--chdir`.
import { describe, expect, it } from 'vitest';
import { bwrapArgs } from '../../../src/adapters/sandbox/bwrapArgs.js';

const base = { mode: 'workspace-write' as const, root: '/w', cwd: '/w', tmpDir: '/t', network: false, pin: [], readOnly: ['/w/.git'], asPid1: true, userns: true };

describe('bwrapArgs', () => {
  it('masks directories with a read-only tmpfs and files with /dev/null, covers files, loads the filter; all after the binds', () => {
    const a = bwrapArgs({ ...base, hideDirs: ['/h/.ssh'], hideFiles: ['/etc/shadow'], coverFiles: [{ path: '/w/package.json', with: '/x/{}.json' }], seccompFd: 9 });
    const tail = a.slice(a.indexOf('/w/.git') + 2);
    expect(tail).toEqual(['--tmpfs', '/h/.ssh', '--remount-ro', '/h/.ssh', '--ro-bind', '/dev/null', '/etc/shadow', '--ro-bind', '/x/{}.json', '/w/package.json', '--seccomp', '9', '--chdir', '/w', '--']);
    expect(a.indexOf('--bind')).toBeLessThan(a.indexOf('--tmpfs', a.indexOf('/run') + 1));
  });

  it('without them, the line is as before', () => {
    const a = bwrapArgs(base);
    expect(a).not.toContain('--seccomp');
    expect(a.slice(-4)).toEqual(['/w/.git', '--chdir', '/w', '--']);
  });
});
