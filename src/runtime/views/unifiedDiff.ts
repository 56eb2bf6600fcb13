/**
 * A unified diff of two texts, line by line (`--- a/PATH`, `+++ b/PATH`, `@@ -l,n +l,n @@` hunks
 * with 3 lines of context), for approval previews (SPEC §10.5). Pure and browser-safe.
 *
 * The common head and tail are trimmed first; what is left is diffed with a longest common
 * subsequence when it is small enough (MAX_LCS_CELLS), else shown as one block removed and one
 * added (still a correct diff, only not a minimal one). A new file (`before` undefined) is all
 * additions against `/dev/null`.
 */

export const DIFF_CONTEXT_LINES = 3;
/** The LCS table's size limit (cells = removed lines × added lines of the middle part). */
const MAX_LCS_CELLS = 250_000;

type Op = { readonly kind: ' ' | '-' | '+'; readonly line: string };

/** Splits into lines; a last line without a newline is marked (as `diff` does). */
function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

function middleOps(a: readonly string[], b: readonly string[]): Op[] {
  if (a.length * b.length > MAX_LCS_CELLS) return [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  // lcs[i][j]: the LCS length of a[i..] and b[j..].
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i * w + j + 1]! >= lcs[(i + 1) * w + j]!)) ops.push({ kind: '+', line: b[j++]! });
    else ops.push({ kind: '-', line: a[i++]! });
  }
  // Removals before additions inside each changed run (the usual reading order).
  const out: Op[] = [];
  for (let k = 0; k < ops.length; ) {
    if (ops[k]!.kind === ' ') {
      out.push(ops[k++]!);
      continue;
    }
    const run: Op[] = [];
    while (k < ops.length && ops[k]!.kind !== ' ') run.push(ops[k++]!);
    out.push(...run.filter((o) => o.kind === '-'), ...run.filter((o) => o.kind === '+'));
  }
  return out;
}

/** The unified diff of `before` → `after` for `path`; '' when they are equal. */
export function unifiedDiff(path: string, before: string | undefined, after: string, context = DIFF_CONTEXT_LINES): string {
  const a = linesOf(before ?? '');
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  if (head === a.length && head === b.length) return '';
  const ops: Op[] = [
    ...a.slice(0, head).map((line) => ({ kind: ' ' as const, line })),
    ...middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((line) => ({ kind: ' ' as const, line })),
  ];
  // Hunks: each change with `context` lines around it; changes closer than 2×context share one.
  const changed = ops.map((o, k) => (o.kind === ' ' ? -1 : k)).filter((k) => k >= 0);
  const hunks: Array<[number, number]> = [];
  for (const k of changed) {
    const from = Math.max(0, k - context);
    const to = Math.min(ops.length, k + context + 1);
    const last = hunks[hunks.length - 1];
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else hunks.push([from, to]);
  }
  const out = [before === undefined ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`];
  // Line numbers before each op, in the old and the new text.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let n = 1;
  for (const op of ops) {
    oldAt.push(o);
    newAt.push(n);
    if (op.kind !== '+') o++;
    if (op.kind !== '-') n++;
  }
  for (const [from, to] of hunks) {
    const part = ops.slice(from, to);
    const oldCount = part.filter((p) => p.kind !== '+').length;
    const newCount = part.filter((p) => p.kind !== '-').length;
    // An empty side starts at the line before (as `diff -u` writes `-0,0`).
    const oldStart = oldCount === 0 ? oldAt[from]! - 1 : oldAt[from]!;
    const newStart = newCount === 0 ? newAt[from]! - 1 : newAt[from]!;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const p of part) out.push(`${p.kind}${p.line}`);
  }
  return out.join('\n');
}

/**
 * Cuts `text` to at most `maxChars` (on a line boundary when it can), ending with a marker line
 * that says how much was left out.
 */
export function boundedText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  let cut = text.lastIndexOf('\n', maxChars);
  if (cut < maxChars / 2) cut = maxChars;
  const kept = text.slice(0, cut);
  const leftLines = text.slice(cut).split('\n').filter((l, i) => i > 0 || l !== '').length;
  return { text: `${kept}\n… (preview cut: ${text.length - cut} more characters, ${leftLines} line${leftLines === 1 ? '' : 's'})`, truncated: true };
}
