/**
 * docs/concepts.md lists every piece of module-level state in `src/` and `machines/` (issue 33
 * item 3: no hidden registries), and nothing else: a top-level `let`, `Map`, `WeakMap`, `WeakSet`
 * or empty `Set` added to the code fails here until the table says what it holds and why it is safe.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TOP_LEVEL_STATE = /^(?:export )?(?:let ([A-Za-z_$][\w$]*)|const ([A-Za-z_$][\w$]*) = new (?:Map|WeakMap|WeakSet)\b|const ([A-Za-z_$][\w$]*) = new Set(?:<[^>]*>)?\(\))/;

function stateInCode(): string[] {
  const found: string[] = [];
  for (const dir of ['src', 'machines']) {
    for (const rel of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || rel.endsWith('.d.ts')) continue;
      const file = `${dir}/${rel.replace(/\\/g, '/')}`;
      for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
        const m = TOP_LEVEL_STATE.exec(line);
        if (m) found.push(`${file} ${m[1] ?? m[2] ?? m[3]}`);
      }
    }
  }
  return found.sort();
}

function stateInDocs(): string[] {
  const doc = readFileSync(join(root, 'docs', 'concepts.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Module-level state'));
  const rows = section.split('\n').filter((l) => /^\| `[^`]+` \| `/.test(l));
  return rows
    .flatMap((row) => {
      const [, file, names] = row.split('|').map((c) => c.trim());
      return [...names!.matchAll(/`([^`]+)`/g)].map((m) => `${file!.slice(1, -1)} ${m[1]}`);
    })
    .sort();
}

describe('module-level state', () => {
  it('docs/concepts.md lists every piece of it, and only those', () => {
    const code = stateInCode();
    expect(code.length).toBeGreaterThan(5);
    expect(stateInDocs()).toEqual(code);
  });

  it('the pattern sees what it claims to', () => {
    for (const line of ['let x = 0;', 'const c = new Map<string, number>();', 'const w = new WeakMap();', 'const s = new Set<string>();', 'export let y: number | undefined;']) expect(TOP_LEVEL_STATE.test(line), line).toBe(true);
    for (const line of ["const S = new Set(['a']);", '  let inner = 0;', 'const m = makeMap();']) expect(TOP_LEVEL_STATE.test(line), line).toBe(false);
  });
});
