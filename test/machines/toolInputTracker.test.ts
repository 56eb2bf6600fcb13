import { describe, expect, it } from 'vitest';
import { JsonObjectEnd } from '../../machines/jsonObjectEnd.js';
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
});
