/** The built-in tool schemas of docs/tools.md are generated from the zod schemas; a stale block fails here. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { END, README, START, renderToolSchemas, withToolSchemas } from '../../scripts/toolSchemas.js';

describe('docs/tools.md tool schemas', () => {
  it('the block between the markers is what the zod schemas render to (else: npm run docs:tools)', async () => {
    const readme = await readFile(README, 'utf8');
    expect(readme.includes(START) && readme.includes(END), 'markers missing from docs/tools.md').toBe(true);
    expect(withToolSchemas(readme) === readme, 'docs/tools.md tool schemas are stale: run `npm run docs:tools` and commit docs/tools.md').toBe(true);
  });

  it('renders every built-in tool, and a changed schema changes the block', () => {
    const block = renderToolSchemas();
    for (const name of ['read', 'grep', 'glob', 'write', 'edit', 'bash']) expect(block).toContain(`#### \`${name}\``);
    expect(block).toContain('"required": [\n    "command"\n  ]');
    const stale = `${START}\n${block.replace('"minLength": 1', '"minLength": 2')}\n${END}`;
    expect(withToolSchemas(stale)).not.toBe(stale);
  });
});
