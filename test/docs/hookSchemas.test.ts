/** docs/hooks.schema.json is generated from the zod schemas of the hook messages; a stale file fails here. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HOOK_SCHEMA_FILE, renderHookSchemas } from '../../scripts/hookSchemas.js';

describe('docs/hooks.schema.json', () => {
  it('is what the zod schemas render to (else: npm run docs:hooks)', async () => {
    const committed = await readFile(HOOK_SCHEMA_FILE, 'utf8');
    expect(committed === renderHookSchemas(), 'docs/hooks.schema.json is stale: run `npm run docs:hooks` and commit it').toBe(true);
  });

  it('holds the input and one answer per deciding stage, each versioned, the answers closed to other keys', () => {
    const doc = JSON.parse(renderHookSchemas()) as { $defs: Record<string, { oneOf?: Array<{ properties: Record<string, unknown>; additionalProperties?: boolean }>; properties?: Record<string, unknown> }> };
    expect(Object.keys(doc.$defs)).toEqual(['input', 'preExecuteAnswer', 'guardAnswer', 'postExecuteAnswer']);
    expect(doc.$defs.input!.properties!.version).toMatchObject({ const: 1 });
    for (const name of ['preExecuteAnswer', 'guardAnswer', 'postExecuteAnswer']) {
      const branches = doc.$defs[name]!.oneOf ?? [];
      expect(branches.length).toBeGreaterThanOrEqual(2);
      for (const branch of branches) {
        expect(branch.properties.version).toMatchObject({ const: 1 });
        expect(branch.additionalProperties).toBe(false);
      }
    }
  });
});
