/**
 * The `spill` post-execute policy a runtime installs (SPEC §4), registered last so it spills what
 * the model would see after every other listener's rewrite. Browser-safe.
 */
import type { PipelineLimits } from '../../../machines/callStages.js';
import type { Clock } from '../clock.js';
import type { HookRegistry } from '../hooks.js';
import type { SessionLog } from '../log/sessionLog.js';
import { DEFAULT_MAX_INLINE_BYTES, DEFAULT_SPILL_SAVE_TIMEOUT_MS, mayExceed, spillPolicy } from './spillPolicy.js';
import type { SpillStore } from './spillStore.js';

export interface SpillSettings {
  readonly store: SpillStore;
  readonly log: SessionLog;
  readonly clock: Clock;
  readonly limits: PipelineLimits;
  /** Results larger than this many UTF-8 bytes are spilled (default 16 KiB). */
  readonly maxInlineBytes?: number;
  /** Deadline of one save (default 10 s, never more than half the hook timeout). */
  readonly spillSaveTimeoutMs?: number;
}

export function installSpill(hooks: HookRegistry, s: SpillSettings): void {
  const maxInlineBytes = s.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
  // The policy's own save deadline ends before the hook timeout could fail the call closed.
  const saveTimeoutMs = Math.min(s.spillSaveTimeoutMs ?? DEFAULT_SPILL_SAVE_TIMEOUT_MS, s.limits.hookTimeoutMs / 2);
  hooks.on('tools/post-execute', 'spill', spillPolicy({ store: s.store, maxInlineBytes, log: s.log, clock: s.clock, saveTimeoutMs }), {
    last: true,
    appliesTo: (draft) => mayExceed(draft.content, maxInlineBytes),
  });
}
