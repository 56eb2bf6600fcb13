/** Permission-rule globs: picomatch's syntax (dot: true), compiled to RE2 so a hostile path cannot stall matching. */
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { compileGlob, globToRe2 } from '../../../src/runtime/policies/pathGlob.js';

const GLOBS = ['secrets/**', '**/.env', '*.{js,ts}', 'src/*.ts', 'a/**/b/*.md', '[abc]?x', '**', '*', 'src/**/*.ts', '**/node_modules/**', '{src,test}/**/*.{ts,tsx}', 'docs/*', 'a\\*b', '.github/**', '**/*.test.ts', 'a/**', 'mcp__git*',
  // classes, escapes, nesting and the edges of `**`
  '[^a]x', '[]a]x', '[^]a]x', '[a-c]x', '[x', 'a[', '?', 'a?c', 'a**b', 'a/**/b', '**/b', 'x/**', 'x**/y', '{a,{b,c}}x', '{a,b}/{c,d}', 'a,b', 'a}b',
  '[\\]]x', '[a\\]]x', '[a\\\\]x', 'a\\?b', 'a\\[b', '*.*', '.*', 'a^b', 'a$b', '**/**', '**x', 'x/**/', '{,a}b'];
const PATHS = ['secrets', 'secrets/k', 'secrets/a/.env', '.env', 'x/.env', 'a.js', 'a.ts', 'b/a.ts', 'src/a.ts', 'src/x/a.ts', 'a/b/x.md', 'a/x/y/b/z.md', 'a/b', 'bax', 'b/ax', 'README.md', 'node_modules/x', 'p/node_modules/q/r', 'test/a/b.tsx', 'docs/a', 'docs/a/b', 'a', 'a*b', 'axb', '.github/workflows/ci.yml', 'x.test.ts', 'src/a/x.test.ts', 'mcp__github__x',
  'ax', 'bx', 'cx', 'dx', ']x', '/x', 'x', '[x', 'a[', 'b', 'c', 'abc', 'a/c', 'ab', 'aXb', 'x/b', 'x/y', 'x/y/z', 'xy', 'x/a/y', 'a,b', 'a}b', '\\x', 'a\\',
  'a?b', 'a[b', 'a/a', 'a.b', '.a', 'a^b', 'a$b', 'xx', '[a]x', ']ax', 'a]x', '!x', '-x', '[a]'];

describe('permission-rule globs', () => {
  it.each(GLOBS)('%s agrees with picomatch { dot: true } on workspace paths', (glob) => {
    const ours = compileGlob(glob);
    const theirs = picomatch(glob, { dot: true, windows: false });
    expect(PATHS.filter((p) => ours(p) !== theirs(p))).toEqual([]);
  });

  it('a pattern that makes picomatch\'s RegExp backtrack answers at once (linear RE2)', () => {
    const m = compileGlob('**/*a*a*a*a*a*b');
    const t = Date.now();
    expect(m('a'.repeat(100_000))).toBe(false);
    expect(m('a/'.repeat(50_000))).toBe(false);
    expect(Date.now() - t).toBeLessThan(60_000); // only catches a hang
  });

  it.each([
    ['', /^invalid glob "": empty$/],
    ['!secrets/**', /negated globs are not supported/],
    ['{a,b', /an unclosed \{/],
    ['a\\', /ends in a backslash/],
  ])('refuses %s', (glob, why) => {
    expect(() => globToRe2(glob)).toThrow(why);
  });

  it('`[!…]` is `[^…]` (picomatch reads `[!` otherwise), and no class matches `/`', () => {
    for (const glob of ['[!a]x', '[!]a]x', '[!/]x']) {
      const ours = compileGlob(glob);
      const caret = compileGlob(`[^${glob.slice(2)}`);
      expect(['ax', 'bx', ']x', '/x', '!x', '[a]x'].filter((p) => ours(p) !== caret(p)), glob).toEqual([]);
    }
    expect(['ax', 'bx', ']x', '/x'].filter(compileGlob('[!a]x'))).toEqual(['bx', ']x']);
    expect(['ax', 'bx', ']x', '/x'].filter(compileGlob('[!]a]x'))).toEqual(['bx']);
    expect(['ax', '/x', 'a/x'].filter(compileGlob('[!b]x'))).toEqual(['ax']);
  });

  it('a class of one character matches that character (picomatch also takes `[a]x` literally)', () => {
    expect(['ax', 'bx', '[a]x'].filter(compileGlob('[a]x'))).toEqual(['ax']);
  });

  it('a class that does not close is a literal `[`', () => {
    expect(compileGlob('[ab')('[ab')).toBe(true);
    expect(compileGlob('[ab')('a')).toBe(false);
    expect(compileGlob('x[\\]')('x[]')).toBe(true);
  });

  it('a class range RE2 refuses is a TypeError naming the glob', () => {
    expect(() => compileGlob('[z-a]')).toThrow(/^invalid glob "\[z-a\]": /);
  });

  it('extglob and regex characters are literal', () => {
    expect(compileGlob('a+(b)|c')('a+(b)|c')).toBe(true);
    expect(compileGlob('a+(b)|c')('ab')).toBe(false);
    expect(compileGlob('v1.2')('v1x2')).toBe(false);
  });
});
