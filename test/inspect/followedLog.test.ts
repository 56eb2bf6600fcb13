// `dsh inspect --follow`: a session log another writer appends to reaches the page line by line,
// each line checked as replay checks it; a write in progress waits for its newline; a damaged
// line stops the following, once, and keeps what was read before it.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checksumHex, crc32cOfUtf8 } from '../../src/adapters/log/crc32c.js';
import { openJsonlSessionLog, readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { followJsonlLog, type FollowedLog } from '../../src/cli/inspect/followedLog.js';
import type { LogEvent } from '../../src/protocol/index.js';

const dirs: string[] = [];
const feeds: FollowedLog[] = [];
afterEach(() => {
  for (const f of feeds.splice(0)) f.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A session file with two events, written by the real JSONL session log (still open). */
async function session() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-follow-'));
  dirs.push(dir);
  const path = join(dir, 'session.jsonl');
  const opened = await openJsonlSessionLog(path, { checkpointEvery: 0 });
  opened.log.append({ type: 'turn/start', turnId: 't1', input: 'hi' });
  opened.log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
  await opened.sink.flush();
  return { path, log: opened.log, sink: opened.sink };
}

async function follow(path: string) {
  const stops: Array<string | undefined> = [];
  const feed = followJsonlLog(path, await readJsonlLog(path), { intervalMs: 5, onStop: (r) => stops.push(r) });
  feeds.push(feed);
  const seen: LogEvent[] = [];
  feed.log.subscribe((e) => seen.push(e));
  return { feed, seen, stops };
}

/** Waits until `ok()` (polling; generous: only a hang fails). */
async function until(ok: () => boolean) {
  for (let i = 0; i < 2000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(ok()).toBe(true);
}

const seqs = (seen: LogEvent[]) => seen.map((e) => e.seq);
const lineOf = (event: object) => {
  const json = JSON.stringify(event);
  return `${checksumHex(crc32cOfUtf8(json))} ${json}\n`;
};

describe('dsh inspect --follow', () => {
  it('shows what is read, then each event another writer appends, in order', async () => {
    const s = await session();
    const { feed, seen } = await follow(s.path);
    expect(feed.live).toBe(true);
    expect(feed.log.events().map((e) => e.seq)).toEqual([1, 2]);
    s.log.append({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop', toolCalls: 0 });
    s.log.append({ type: 'turn/end', turnId: 't1', outcome: 'completed', steps: 1 });
    await s.sink.flush();
    await until(() => seqs(seen).length === 2);
    expect(seqs(seen)).toEqual([3, 4]);
    expect(feed.log.events().map((e) => e.type)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end']);
    await s.sink.close();
  });

  it('a line being written (no newline yet) is shown once it is complete, never half', async () => {
    const s = await session();
    await s.sink.close();
    const { seen, stops } = await follow(s.path);
    const line = lineOf({ seq: 3, time: 0, type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop', toolCalls: 0 });
    appendFileSync(s.path, line.slice(0, 30));
    await new Promise((r) => setTimeout(r, 50));
    expect(seqs(seen)).toEqual([]);
    appendFileSync(s.path, line.slice(30));
    await until(() => seqs(seen).length === 1);
    expect(seqs(seen)).toEqual([3]);
    expect(stops).toEqual([]);
  });

  it('a damaged line stops the following once, with a reason; what was read stays', async () => {
    const s = await session();
    await s.sink.close();
    const { feed, seen, stops } = await follow(s.path);
    const good = lineOf({ seq: 3, time: 0, type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop', toolCalls: 0 });
    const bad = lineOf({ seq: 4, time: 0, type: 'turn/end', turnId: 't1', outcome: 'completed', steps: 1 }).replace('completed', 'complete!');
    appendFileSync(s.path, good + bad);
    await until(() => stops.length === 1);
    expect(stops[0]).toMatch(/stopped following .*session\.jsonl.*checksum/i);
    expect(seqs(seen)).toEqual([3]);
    expect(feed.live).toBe(false);
    expect(feed.log.events().map((e) => e.seq)).toEqual([1, 2, 3]);
    // Stopped once: closing it now changes nothing and says nothing more.
    feed.close();
    expect(stops).toHaveLength(1);
  });
});
