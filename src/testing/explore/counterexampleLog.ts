/**
 * A failing run's session, written as a JSONL session log (checksummed lines, as `dsh run` writes
 * them) that `dsh inspect <file>` opens. Node only.
 */
import { join } from 'node:path';
import { createJsonlLogSink } from '../../adapters/log/jsonlSink.js';
import type { LogEvent } from '../../protocol/index.js';

/** `<n>-<invariant as a file name>.jsonl` in `dir`; returns its path. */
export async function writeCounterexample(dir: string, invariant: string, n: number, events: readonly LogEvent[]): Promise<string> {
  const slug = invariant.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'failure';
  const path = join(dir, `${n}-${slug}.jsonl`);
  const sink = createJsonlLogSink({ path, fsync: false, lazyCommitMs: 0 });
  for (const e of events) sink.write(e);
  await sink.close();
  return path;
}
