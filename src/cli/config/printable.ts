/**
 * A string from a config file or a repository made printable on one terminal line: what
 * `visible` (protocol/visibleText.ts) escapes, and newline and tab too (a line stays one line).
 */
import { visible } from '../../protocol/visibleText.js';

export function printable(s: string): string {
  return visible(s).replace(/[\n\t]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
