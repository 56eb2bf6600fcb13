/** One line for a zod issue of a config file: `permissions[2].decision: expected "allow" | "deny" | "ask", got "maybe"`. */
import type { z } from 'zod';

/** `permissions[2].decision`, `mcpServers["my server"]`; the empty path is `(top level)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (typeof k === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k)) out += out === '' ? k : `.${k}`;
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out === '' ? '(top level)' : out;
}

function shortJson(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** The field path and what is wrong with it, on one line. Never throws. */
export function formatIssue(issue: z.core.$ZodIssue): string {
  const i = issue as z.core.$ZodIssue & { input?: unknown };
  const got = 'input' in i ? `, got ${shortJson(i.input)}` : '';
  switch (i.code) {
    case 'invalid_value':
      return `${formatPath(i.path)}: expected ${i.values.map((v) => shortJson(v)).join(' | ')}${got}`;
    case 'invalid_type':
      return `${formatPath(i.path)}: expected ${i.expected}${'input' in i ? `, got ${typeOf(i.input)}` : ''}`;
    case 'unrecognized_keys':
      return i.keys.map((k) => `${formatPath([...i.path, k])}: unknown key`).join('; ');
    case 'too_small':
    case 'too_big': {
      const op = i.code === 'too_small' ? (i.inclusive ? '>=' : '>') : i.inclusive ? '<=' : '<';
      const bound = String(i.code === 'too_small' ? i.minimum : i.maximum);
      const what = i.origin === 'string' ? `a string of length ${op} ${bound}` : i.origin === 'array' ? `${op} ${bound} items` : `a number ${op} ${bound}`;
      return `${formatPath(i.path)}: expected ${what}${got}`;
    }
    case 'invalid_key':
      return `${formatPath(i.path)}: invalid key: ${i.issues.map((x) => x.message).join('; ')}`;
    default:
      return `${formatPath(i.path)}: ${i.message}`;
  }
}
