/**
 * Globs for permission rules, compiled to RE2 and matched in time linear in the path.
 * picomatch (and every glob library that compiles to a JavaScript RegExp) backtracks: its regex
 * for `**\/*a*a*a*a*a*b` did not finish on a 256-character path of `a`s, and the path is the
 * model's. The syntax is picomatch's with `dot: true`, minus what RE2 cannot express or a
 * policy does not need:
 * - `*` any run of characters but `/` (dotfiles too); `?` one character but `/`;
 * - `**` as a whole segment: any number of segments (`a/**` also matches `a` itself);
 * - `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` (never `/`); `{a,b}` alternatives (nestable);
 * - `\x` a literal `x`. Every other character is literal (`(`, `|`, `+`, `@`, `!` included, so
 *   no extglobs); no `{1..3}` ranges; a glob starting with `!` is refused (order rules instead).
 */
import { RE2JS } from 're2js';

const META = new Set(['.', '+', '(', ')', '|', '^', '$', '\\', '{', '}', '[', ']', '*', '?']);
const lit = (c: string) => (META.has(c) ? `\\${c}` : c);

/** The RE2 source of a glob (anchored). Throws a TypeError naming the glob when it is not supported. */
export function globToRe2(glob: string): string {
  const fail = (why: string): never => {
    throw new TypeError(`invalid glob ${JSON.stringify(glob)}: ${why}`);
  };
  if (glob === '') fail('empty');
  if (glob.startsWith('!')) fail('negated globs are not supported (put a rule with the other decision first)');
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      if (i + 1 >= glob.length) fail('ends in a backslash');
      out += lit(glob[++i]!);
    } else if (c === '*') {
      let j = i;
      while (glob[j] === '*') j++;
      const starts = i === 0 || glob[i - 1] === '/';
      const ends = j === glob.length || glob[j] === '/';
      if (j - i >= 2 && starts && ends) {
        if (j < glob.length) out += '(?:[^/]*/)*'; // `**/`: zero or more whole segments
        else if (out.endsWith('/')) out = `${out.slice(0, -1)}(?:/.*)?`; // `a/**`: `a` itself or anything under it
        else out += '.*'; // `**` alone
        i = j; // past the `/` after it (the loop's step), or at the end
      } else {
        out += '[^/]*';
        i = j - 1;
      }
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      let j = i + 1;
      if (glob[j] === '!' || glob[j] === '^') j++;
      if (glob[j] === ']') j++;
      // Stryker disable next-line EqualityOperator: past the end, glob[j] is undefined and the scan stops one step later, still past the end
      while (j < glob.length && glob[j] !== ']') j += glob[j] === '\\' ? 2 : 1; // `[\]]`: an escaped `]` is in the class
      if (j >= glob.length) {
        out += '\\[';
        continue;
      }
      const body = glob.slice(i + 1, j);
      const negated = body.startsWith('!') || body.startsWith('^');
      // A `]` first in the class is one of its characters (`[]a]`, `[!]a]`), escaped since `[^/` now comes before it.
      const chars = (negated ? body.slice(1) : body).replace(/^\]/, '\\]');
      out += negated ? `[^/${chars}]` : `[${chars}]`;
      i = j;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === ',' && braces > 0) out += '|';
    else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else out += lit(c);
  }
  if (braces > 0) fail('an unclosed {');
  return `^(?:${out})$`;
}

/** A linear-time matcher for `glob` (see the file comment for the syntax). */
export function compileGlob(glob: string): (path: string) => boolean {
  const source = globToRe2(glob);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (e) {
    throw new TypeError(`invalid glob ${JSON.stringify(glob)}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return (path) => re.matcher(path).find();
}
