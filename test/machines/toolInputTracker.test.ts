import { describe, expect, it } from 'vitest';
import { EARLY_END_LIMITS, JsonObjectEnd } from '../../machines/jsonObjectEnd.js';
import { ToolInputTracker, type ReadyToolCall } from '../../machines/toolInputTracker.js';

function tracker() {
  const out: ReadyToolCall[] = [];
  return { t: new ToolInputTracker((c) => out.push(c)), out };
}

describe('ToolInputTracker', () => {
  it('reports a call once its streamed input is a closed object, before tool-input-end and tool-call; each call once', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.delta('a', '{"path":"a}');
    expect(out).toEqual([]); // the `}` is inside a string
    t.delta('a', '.txt", "n": {"x": [1, "]"]}');
    expect(out).toEqual([]);
    t.delta('a', '}');
    expect(out).toEqual([{ callId: 'a', toolName: 'read', input: '{"path":"a}.txt", "n": {"x": [1, "]"]}}' }]);
    t.end('a');
    t.call('a', 'read', '{"path":"a}.txt","n":{"x":[1,"]"]}}');
    expect(out).toHaveLength(1);
  });

  it('keeps the order calls started in, when a later call completes first (interleaved argument streams)', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.start('b', 'read');
    t.delta('a', '{"path":');
    t.delta('b', '{"path":"b"}');
    expect(out).toEqual([]);
    t.delta('a', '"a"}');
    expect(out.map((c) => c.callId)).toEqual(['a', 'b']);
  });

  it('an empty input waits for the tool-call part (providers fill in {}); tool-input-end dispatches the streamed text otherwise', () => {
    const { t, out } = tracker();
    t.start('a', 'now');
    t.end('a');
    expect(out).toEqual([]);
    t.call('a', 'now', '{}');
    t.start('b', 'read');
    t.delta('b', 'not json');
    t.end('b');
    expect(out).toEqual([
      { callId: 'a', toolName: 'now', input: '{}' },
      { callId: 'b', toolName: 'read', input: 'not json' },
    ]);
  });

  it('at the finish, ready calls held behind one that never completed are reported', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.delta('a', '{"half');
    t.start('b', 'read');
    t.delta('b', '{}');
    expect(out).toEqual([]);
    t.flush();
    expect(out.map((c) => c.callId)).toEqual(['b']);
  });

  it('JsonObjectEnd: non-objects and trailing garbage are never complete', () => {
    const feed = (...parts: string[]) => {
      const j = new JsonObjectEnd();
      let r = false;
      for (const p of parts) r = j.feed(p);
      return r;
    };
    expect(feed('  {', '"a":"\\"}"', '}  ')).toBe(true);
    expect(feed('[1]')).toBe(false);
    expect(feed('{}', 'x')).toBe(false);
    expect(feed('{"a":1')).toBe(false);
  });

  it('hostile inputs (too deep, too long) are never parsed early: they wait for the provider and the pipeline limits', () => {
    const { t, out } = tracker();
    const deep = `{"a":${'['.repeat(100)}${']'.repeat(100)}}`;
    t.start('deep', 'read');
    t.delta('deep', deep);
    const long = `{"a":"${'x'.repeat((1 << 20) + 10)}"}`;
    t.start('long', 'read');
    t.delta('long', long);
    expect(out).toEqual([]);
    t.end('deep');
    t.end('long');
    expect(out.map((c) => [c.callId, c.input.length])).toEqual([
      ['deep', deep.length],
      ['long', long.length],
    ]);
  });

  it('JsonObjectEnd: JSON whitespace (space, tab, CR, LF) before and after the object still completes it', () => {
    const j = new JsonObjectEnd();
    expect(j.feed('\t\r\n {"a":\t1\r\n}')).toBe(true);
    expect(j.feed('\n\r\t ')).toBe(true);
  });

  it('JsonObjectEnd: an object exactly at the limits (chars, depth) is complete early; one past them is not', () => {
    const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(new JsonObjectEnd().feed(nested(EARLY_END_LIMITS.maxDepth))).toBe(true);
    expect(new JsonObjectEnd().feed(nested(EARLY_END_LIMITS.maxDepth + 1))).toBe(false);
    const sized = (chars: number) => `{"a":"${'x'.repeat(chars - 8)}"}`;
    expect(sized(EARLY_END_LIMITS.maxChars)).toHaveLength(EARLY_END_LIMITS.maxChars);
    expect(new JsonObjectEnd().feed(sized(EARLY_END_LIMITS.maxChars))).toBe(true);
    const split = new JsonObjectEnd();
    split.feed('{"a":"');
    expect(split.feed(`${'x'.repeat(EARLY_END_LIMITS.maxChars - 7)}"}`)).toBe(false);
  });

  it('a closed object that is not valid JSON (a trailing comma) waits for tool-input-end', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.delta('a', '{"path":"a",}');
    expect(out).toEqual([]);
    t.end('a');
    expect(out).toEqual([{ callId: 'a', toolName: 'read', input: '{"path":"a",}' }]);
  });

  it('a call is reported once: a repeated tool-input-start, deltas or a tool-call part after it is ready change nothing', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.delta('a', '{"path":"a"}');
    t.start('a', 'read');
    t.delta('a', 'junk');
    t.end('a');
    t.call('a', 'write', '{"path":"other"}');
    t.flush();
    expect(out).toEqual([{ callId: 'a', toolName: 'read', input: '{"path":"a"}' }]);
    // A repeated start of a call still streaming keeps its text.
    t.start('b', 'read');
    t.delta('b', '{"path":');
    t.start('b', 'read');
    t.delta('b', '"b"}');
    expect(out.at(-1)).toEqual({ callId: 'b', toolName: 'read', input: '{"path":"b"}' });
  });

  it('an input of only whitespace waits for the tool-call part, like an empty one', () => {
    const { t, out } = tracker();
    t.start('a', 'now');
    t.delta('a', '  ');
    t.end('a');
    expect(out).toEqual([]);
    t.call('a', 'now', '{}');
    expect(out).toEqual([{ callId: 'a', toolName: 'now', input: '{}' }]);
  });

  it('a call that is ready but held behind an earlier one keeps the input it became ready with: later deltas, its end or its tool-call part change nothing', () => {
    const { t, out } = tracker();
    t.start('a', 'read');
    t.delta('a', '{"path":');
    // b is complete by its streamed text; whitespace after it, its end and a re-serialized tool-call part follow
    t.start('b', 'read');
    t.delta('b', '{"path":"b"}');
    t.delta('b', ' ');
    t.end('b');
    t.call('b', 'write', '{"path": "b"}');
    // c is complete by its tool-call part; its half-streamed text ends after that
    t.start('c', 'read');
    t.delta('c', '{"path":"c"');
    t.call('c', 'read', '{"path":"c"}');
    t.end('c');
    expect(out).toEqual([]);
    t.delta('a', '"a"}');
    expect(out).toEqual([
      { callId: 'a', toolName: 'read', input: '{"path":"a"}' },
      { callId: 'b', toolName: 'read', input: '{"path":"b"}' },
      { callId: 'c', toolName: 'read', input: '{"path":"c"}' },
    ]);
  });

  it('JsonObjectEnd: quotes and braces inside strings, escaped or not, do not close the object; the first string may be empty', () => {
    for (const text of ['{"":1}', String.raw`{"q":"\""}`, String.raw`{"q":"\\"}`, String.raw`{"q":"say \"}\""}`]) {
      expect(JSON.parse(text)).toBeTypeOf('object');
      expect(new JsonObjectEnd().feed(text)).toBe(true);
    }
    // Something before the object makes it no object, even if one follows.
    expect(new JsonObjectEnd().feed('x{}')).toBe(false);
    // Split anywhere, the same.
    const split = new JsonObjectEnd();
    const chars = [...String.raw`{"q":"\"}"}`];
    expect(chars.map((c) => split.feed(c))).toEqual(chars.map((_, i) => i === chars.length - 1));
  });
});
