/**
 * What a spilled result is (SPEC §4): its model-facing `content` is the preview, its
 * `metadata.spill` says where the full text is (locator, bytes, lines, retrieval hint), and it has
 * no `value`. The full text lives only in the spill store, never in the result, so the log event
 * of a 100 MB output is the size of its preview, and a replayed session sees the same result as
 * the live one did. Read the text back with `readAllSpilled` (or a page with `readSpilledPage`).
 */
import type { PostExecuteOutcome, ResultDraft } from '../../../machines/callStages.js';

/** Where a spilled result's full text is, as the `spill` policy records it in `metadata.spill`. */
export interface SpillReference {
  readonly locator: string;
  readonly bytes: number;
  readonly lines: number;
  readonly retrievalHint?: string;
}

/** The spill reference of a result (or draft), if it was spilled. */
export function spillReferenceOf(result: { readonly metadata: Readonly<Record<string, unknown>> }): SpillReference | undefined {
  const spill = result.metadata.spill as Partial<SpillReference> | undefined;
  return spill !== null && typeof spill === 'object' && typeof spill.locator === 'string' && spill.locator !== '' ? (spill as SpillReference) : undefined;
}

/**
 * The post-execute stage's outcome with the value of a spilled result dropped (callStages.ts):
 * `tools/result` observers, the caller and the log all get the result without it.
 */
export function withoutSpilledValue(outcome: PostExecuteOutcome): PostExecuteOutcome {
  if (outcome.kind !== 'accepted' || outcome.draft.value === undefined || !spillReferenceOf(outcome.draft)) return outcome;
  const { parts } = outcome.draft;
  const draft: ResultDraft = Object.freeze({ value: undefined, content: outcome.draft.content, metadata: outcome.draft.metadata, ...(parts ? { parts } : {}) });
  return { kind: 'accepted', draft };
}
