import { describe, expect, it } from 'vitest';
import { protectedBy, protectedPaths, userConfigDir } from '../../../src/adapters/sandbox/protectedPaths.js';

describe('protectedPaths', () => {
  it('lists .dsh, dsh.config.json, the user config dir, .git/hooks and .git/config (SPEC §10.3)', () => {
    const list = protectedPaths({ root: '/w', userConfigDir: '/home/u/.config/dsh' });
    expect(list.map((p) => [p.rule, p.path, p.kind])).toEqual([
      ['dsh-state', '/w/.dsh', 'dir'],
      ['project-config', '/w/dsh.config.json', 'file'],
      ['user-config', '/home/u/.config/dsh', 'dir'],
      ['git-hooks', '/w/.git/hooks', 'dir'],
      ['git-config', '/w/.git/config', 'file'],
    ]);
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
    expect(protectedBy(list, '/w/.git/objects/ab')).toBeUndefined();
    expect(protectedBy(list, '/w/.git/hooks/pre-commit')?.rule).toBe('git-hooks');
  });
});
