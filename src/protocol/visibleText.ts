/**
 * What a person sees is what runs (SPEC §10.6): every string dsh shows that a model, a tool, a
 * hook, a log or a repository chose goes through {@link visible} first, so a terminal (or a page)
 * shows its control characters instead of obeying them.
 *
 * Shown as `\uXXXX` escapes: C0 controls except newline and tab (ESC, CR, BEL, backspace, …), DEL,
 * the C1 controls (U+0080–U+009F, CSI and OSC among them), the bidirectional overrides and
 * isolates that reorder what is drawn (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), and
 * the invisible characters that hide a word break (U+200B, U+2060, U+FEFF). The escape is JSON's
 * own, so a JSON line stays valid JSON with the same value after it. Pure and browser-safe.
 */

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;
const HAS_CONTROL = new RegExp(CONTROL.source);

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with its control characters shown as `\uXXXX` (see the module note); newline and tab kept. */
export function visible(text: string): string {
  return HAS_CONTROL.test(text) ? text.replace(CONTROL, escape) : text;
}

/** {@link visible}, with newline and tab escaped too: the text stays on one terminal line (a config's path, a command in a question). */
export function visibleLine(text: string): string {
  return visible(text).replace(/[\n\t]/g, escape);
}

/** Whether `text` holds a character {@link visible} would show escaped. */
export function hasControlCharacters(text: string): boolean {
  return HAS_CONTROL.test(text);
}

/**
 * Whether any string in a JSON-like value (a call's arguments) holds a control character: keys
 * and values, to a bounded depth and count (a deeper or larger value counts as holding one, so a
 * question about it says so rather than vouching for what it did not look at).
 */
export function containsControlCharacters(value: unknown, budget = { nodes: 10_000 }, depth = 0): boolean {
  if (typeof value === 'string') return hasControlCharacters(value);
  if (value === null || typeof value !== 'object') return false;
  if (depth > 64 || --budget.nodes < 0) return true;
  try {
    for (const [k, v] of Object.entries(value)) {
      if (hasControlCharacters(k) || containsControlCharacters(v, budget, depth + 1)) return true;
    }
  } catch {
    return true;
  }
  return false;
}

/** The longest text from a hook, a listener or a thrown value that is passed on to the model. */
export const MAX_MODEL_FACING_CHARS = 4_096;

/**
 * Text chosen by a hook, a listener or a tool that reaches the model and the terminal (a deny
 * reason, a block's feedback): made visible and cut to {@link MAX_MODEL_FACING_CHARS}, saying so.
 */
export function boundedVisible(text: string, max = MAX_MODEL_FACING_CHARS): string {
  const shown = visible(text);
  return shown.length > max ? `${shown.slice(0, max)}… (${shown.length - max} more chars cut)` : shown;
}
