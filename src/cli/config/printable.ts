/**
 * A string from a config file or a repository made printable for a terminal line: control
 * characters (C0, DEL, C1, bidi overrides) shown as `\xNN` / `\u{NNNN}`, never interpreted.
 */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u{${n.toString(16)}}`;
  });
}
