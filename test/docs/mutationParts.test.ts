/**
 * `npm run mutate` covers the core rooms of issue 37 whole: every source file of a core room is in
 * exactly one named part (a file added to `machines/` or a core folder is mutated without anyone
 * remembering to list it).
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MUTATION_PARTS, partOf } from '../../scripts/mutation/parts.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CORE_ROOMS: Readonly<Record<string, string>> = {
  machines: 'machines',
  pipeline: 'src/runtime/pipeline',
  policies: 'src/runtime/policies',
  view: 'src/view',
  'cli-policy': 'src/cli/policy',
};

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f).replace(/\\/g, '/'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('/index.ts'));
}

describe('the mutation parts', () => {
  for (const [room, dir] of Object.entries(CORE_ROOMS)) {
    it(`cover every source file of ${dir}/ (room ${room})`, () => {
      const files = sourcesUnder(dir);
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        const part = partOf(file);
        expect(part, file).toBeDefined();
        expect(MUTATION_PARTS[part!]!.room, file).toBe(room);
      }
    });
  }

  it('list each file once', () => {
    const listed = Object.values(MUTATION_PARTS).flatMap((p) => p.mutate.filter((g) => !g.startsWith('!')));
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('know no file outside the core rooms', () => {
    expect(partOf('src/runtime/createRuntime.ts')).toBeUndefined();
    expect(partOf('machines/README.md')).toBeUndefined();
  });
});
