// Schemas from MCP servers are hostile: every refusal names its reason, legit recursive schemas
// still work, and what is accepted validates in time linear in the value.
import { describe, expect, it } from 'vitest';
import { compileJsonSchema } from '../../../src/adapters/mcp/jsonSchemaValidator.js';

const refused = (schema: unknown) => {
  const c = compileJsonSchema(schema);
  return c.ok ? undefined : c.reason;
};

describe('compileJsonSchema', () => {
  it('refuses recursion that meets one part of a value twice per level (exponential validation)', () => {
    const arrays = { type: 'object', properties: { c: { $ref: '#/$defs/n' } }, $defs: { n: { anyOf: [{ type: 'array', items: { $ref: '#/$defs/n' } }, { type: 'array', items: { $ref: '#/$defs/n' } }] } } };
    expect(refused(arrays)).toContain('reach the same part of a value twice per level');
    expect(refused({ anyOf: [{ items: { $ref: '#' } }, { contains: { $ref: '#' } }] })).toContain('twice per level');
    expect(refused({ type: 'object', patternProperties: { '^a': { $ref: '#' } }, properties: { ab: { $ref: '#' } } })).toContain('twice per level');
  });

  it('accepts recursive schemas that stay linear: trees, binary trees, any-JSON values', () => {
    const tree = { type: 'object', $ref: '#/$defs/node', $defs: { node: { type: 'object', properties: { value: { type: 'number' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['value'] } } };
    const binary = { type: 'object', properties: { l: { $ref: '#' }, r: { $ref: '#' } } };
    const json = { type: 'object', additionalProperties: { $ref: '#/$defs/j' }, $defs: { j: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'array', items: { $ref: '#/$defs/j' } }, { type: 'object', additionalProperties: { $ref: '#/$defs/j' } }] } } };
    for (const s of [tree, binary, json]) expect(refused(s)).toBeUndefined();
    const c = compileJsonSchema(json);
    let deep: unknown = true; // fails every branch at the bottom: each level is tried once per branch, not twice
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(c.ok && c.check({ a: deep })).toMatch(/must/);
  });

  it('refuses doubling $ref chains, non-local refs and $dynamicRef; RE2 patterns are linear', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i < 40; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { allOf: [{ $ref: `#/$defs/d${i - 1}` }] }] };
    expect(refused({ type: 'object', properties: { v: { $ref: '#/$defs/d39' } }, $defs: defs })).toContain('expands to over 100000 nodes');
    expect(refused({ properties: { a: { $ref: 'https://example.invalid/s.json' } } })).toContain('not a local JSON pointer');
    expect(refused({ $dynamicRef: '#meta' })).toContain('$dynamicRef is not supported');
    const redos = compileJsonSchema({ type: 'string', pattern: '^(a+)+$' });
    expect(redos.ok && redos.check(`${'a'.repeat(100_000)}!`)).toMatch(/must match pattern/);
  });
});
