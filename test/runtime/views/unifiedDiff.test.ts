// unifiedDiff against GNU `diff -u` (an independent implementation) on the same two files: the
// hunks must be the same, line for line. Plus the bound and its marker.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { boundedText, unifiedDiff } from '../../../src/runtime/views/unifiedDiff.js';

const hasDiff = spawnSync('diff', ['--version']).status === 0 && spawnSync('patch', ['--version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'dsh-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** GNU diff's hunks (its two header lines, which carry times, dropped). */
function gnuHunks(before: string, after: string): string {
  writeFileSync(join(dir, 'a'), before);
  writeFileSync(join(dir, 'b'), after);
  const r = spawnSync('diff', ['-u', join(dir, 'a'), join(dir, 'b')], { encoding: 'utf8' });
  return r.stdout.split('\n').slice(2).join('\n').replace(/\n$/, '');
}
const ourHunks = (before: string, after: string) => unifiedDiff('f', before, after).split('\n').slice(2).join('\n');

describe('unifiedDiff', () => {
  it('an edit in the middle of a file: one hunk with three lines of context', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const after = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    expect(unifiedDiff('src/x.txt', before, after)).toBe(['--- a/src/x.txt', '+++ b/src/x.txt', '@@ -2,7 +2,7 @@', ' b', ' c', ' d', '-e', '+E', ' f', ' g', ' h'].join('\n'));
  });

  it('a new file is all additions against /dev/null; equal texts give no diff', () => {
    expect(unifiedDiff('n.md', undefined, '# t\n\nx\n')).toBe(['--- /dev/null', '+++ b/n.md', '@@ -0,0 +1,3 @@', '+# t', '+', '+x'].join('\n'));
    expect(unifiedDiff('n.md', 'same\n', 'same\n')).toBe('');
  });

  it.skipIf(!hasDiff)('as many removed and added lines as diff -u, and patch applies it, for random small files (changes, no final newline, empty files)', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', '', 'x y');
    const text = fc.tuple(fc.array(line, { maxLength: 14 }), fc.boolean()).map(([ls, nl]) => (ls.length === 0 ? '' : ls.join('\n') + (nl ? '\n' : '')));
    fc.assert(
      fc.property(text, text, (before, after) => {
        if (before === after) return;
        // GNU diff may pick a different (equally minimal) alignment: compare what each side keeps,
        // removes and adds, and the hunk headers' line counts.
        const ours = ourHunks(before, after);
        const gnu = gnuHunks(before, after);
        const count = (s: string, p: string) => s.split('\n').filter((l) => l.startsWith(p) && !l.startsWith('@@')).length;
        expect([count(ours, '-'), count(ours, '+')]).toEqual([count(gnu, '-'), count(gnu, '+')]);
        // GNU patch applied to `before` gives `after` (it is a correct diff).
        expect(applyDiff(before, unifiedDiff('f', before, after))).toBe(after);
      }),
      { numRuns: 40 },
    );
  }, 300_000);

  it('boundedText cuts on a line boundary and says how much it left out', () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const b = boundedText(text, 100);
    expect(b.truncated).toBe(true);
    expect(b.text.length).toBeLessThan(200);
    expect(b.text).toMatch(/\n… \(preview cut: \d+ more characters, \d+ lines\)$/);
    expect(text.startsWith(b.text.slice(0, b.text.lastIndexOf('\n…')))).toBe(true);
    expect(boundedText('short', 100)).toEqual({ text: 'short', truncated: false });
  });
});

/** Applies a unified diff with GNU patch (an independent reader of the format). */
function applyDiff(before: string, diff: string): string {
  writeFileSync(join(dir, 'p-in'), before);
  writeFileSync(join(dir, 'p.diff'), `${diff}\n`);
  const r = spawnSync('patch', ['-s', '-f', '-o', join(dir, 'p-out'), join(dir, 'p-in'), join(dir, 'p.diff')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`patch failed: ${r.stdout}${r.stderr}\n${diff}`);
  return readFileSync(join(dir, 'p-out'), 'utf8');
}
