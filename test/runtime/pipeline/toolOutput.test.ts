/**
 * A body that returns `toolOutput` brings its own model-facing content (and maybe typed parts): the
 * value is checked against the output schema, the content replaces `toContent(value)`, parts follow
 * only when there are some. Only a value `toolOutput` made counts: a lookalike is a plain value.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { isToolOutput, toolOutput } from '../../../src/runtime/pipeline/draft.js';
import { expectOk, setup } from './harness.js';

describe('toolOutput', () => {
  it('gives the result its own content and value, and no parts when it brought none', async () => {
    const tools = [
      defineTool({ name: 'plain', input: z.object({}), execute: () => toolOutput({ value: { n: 1 }, content: 'one thing' }) }),
      defineTool({ name: 'empty', input: z.object({}), execute: () => toolOutput({ value: 'v', content: 'no parts', parts: [] }) }),
    ];
    const { rt, call } = setup({ tools });
    const plain = expectOk(rt, await call('plain').result, 'one thing');
    expect(plain.value).toEqual({ n: 1 });
    expect('parts' in plain).toBe(false);
    const empty = expectOk(rt, await call('empty').result, 'no parts');
    expect('parts' in empty).toBe(false);
  });

  it('is told apart from a lookalike that toolOutput did not make', async () => {
    const brand = Symbol.for('dsh.toolOutput');
    const lookalike = { [brand]: true, value: 'hidden', content: 'claimed text' };
    expect(isToolOutput(toolOutput({ value: 1, content: 'x' }))).toBe(true);
    expect(isToolOutput(lookalike)).toBe(false);
    for (const v of [null, undefined, 'text', 7, true]) expect(isToolOutput(v)).toBe(false);
    const tools = [defineTool({ name: 'fake', input: z.object({}), execute: () => lookalike, toContent: () => 'its own toContent' })];
    const { rt, call } = setup({ tools });
    const r = expectOk(rt, await call('fake').result, 'its own toContent');
    expect(r.value).toMatchObject({ value: 'hidden', content: 'claimed text' });
  });
});
