import { describe, expect, it } from 'vitest';
import { mergeModelCallOptions } from '../../machines/modelCallOptions.js';

describe('mergeModelCallOptions', () => {
  it("the turn's options win field by field; headers and provider options merge one level deep", () => {
    expect(
      mergeModelCallOptions(
        { maxOutputTokens: 100, temperature: 1, headers: { a: '1', b: '1' }, providerOptions: { anthropic: { x: 1 } } },
        { temperature: 0, headers: { b: '2' }, providerOptions: { openai: { y: 2 } }, toolChoice: { type: 'required' } },
      ),
    ).toEqual({
      maxOutputTokens: 100,
      temperature: 0,
      headers: { a: '1', b: '2' },
      providerOptions: { anthropic: { x: 1 }, openai: { y: 2 } },
      toolChoice: { type: 'required' },
    });
    expect(mergeModelCallOptions(undefined, undefined)).toEqual({});
  });
});
