import { describe, expect, it } from 'vitest';
import { protectedBy, protectedPaths, userConfigDir } from '../../../src/adapters/sandbox/protectedPaths.js';

describe('protectedPaths', () => {
  it('lists .dsh, dsh.config.json, the user config dir and .git as a whole (SPEC §10.3, §10.7)', () => {
    const list = protectedPaths({ root: '/w', userConfigDir: '/home/u/.config/dsh' });
    expect(list.map((p) => [p.rule, p.path, p.kind])).toEqual([
      ['dsh-state', '/w/.dsh', 'dir'],
      ['project-config', '/w/dsh.config.json', 'file'],
      ['user-config', '/home/u/.config/dsh', 'dir'],
      ['git-dir', '/w/.git', 'dir'],
    ]);
    const withPointers = protectedPaths({ root: '/w', gitDirs: ['/w/meta/repo.git', '/w/meta/common.git'] });
    expect(withPointers.filter((p) => p.rule === 'git-dir').map((p) => p.path)).toEqual(['/w/.git', '/w/meta/repo.git', '/w/meta/common.git']);
    expect(() => protectedPaths({ root: '/w', gitDirs: ['rel'] })).toThrow(TypeError);
  });

  it('refuses a relative root', () => {
    expect(() => protectedPaths({ root: 'w' })).toThrow(TypeError);
  });

  it('finds the user config dir as the loader does', () => {
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x' }, '/home/u')).toBe('/x/dsh');
    expect(userConfigDir({ XDG_CONFIG_HOME: '' }, '/home/u')).toBe('/home/u/.config/dsh');
    expect(userConfigDir({ XDG_CONFIG_HOME: 'rel' }, '/home/u')).toBe('/home/u/.config/dsh');
    expect(userConfigDir({}, '/home/u')).toBe('/home/u/.config/dsh');
  });

  it('protectedBy matches a path and what lies under it, not a sibling sharing a prefix', () => {
    const list = protectedPaths({ root: '/w' });
    expect(protectedBy(list, '/w/.dsh/sessions/a.jsonl')?.rule).toBe('dsh-state');
    expect(protectedBy(list, '/w/.dsh')?.rule).toBe('dsh-state');
    expect(protectedBy(list, '/w/.dshx')).toBeUndefined();
    expect(protectedBy(list, '/w/dsh.config.json')?.rule).toBe('project-config');
    for (const p of ['/w/.git/objects/ab', '/w/.git/hooks/pre-commit', '/w/.git/commondir', '/w/.git/x/config', '/w/.git/modules/sub/hooks/pre-commit', '/w/.git/worktrees/a/config', '/w/.git/info/attributes']) {
      expect(protectedBy(list, p)?.rule).toBe('git-dir');
    }
    expect(protectedBy(list, '/w/.gitignore')).toBeUndefined();
  });
});
