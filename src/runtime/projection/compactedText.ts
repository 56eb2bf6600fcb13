/**
 * The texts that stand in for compacted content in a prompt: the opener of the message that
 * replaces folded turns, and the stub a compacted tool result is shown as.
 */

/** Opens the message that stands in for folded turns. */
export const SUMMARY_PREFIX = '[Summary of the earlier conversation; those turns were compacted]\n';

/** Where the full text of a compacted result can be found again. */
export interface CompactedStubInfo {
  /** Length (chars) of the content the stub replaces. */
  chars: number;
  /** `seq` of the `tool/result` event holding that content. */
  seq: number;
  /** Spill locator when the result was spilled (the log then holds only its preview). */
  locator?: string;
}

/** The short text a compacted tool result is shown as. */
export function compactedStub(info: CompactedStubInfo): string {
  const size = `${groupThousands(info.chars)} chars`;
  return info.locator === undefined
    ? `[result compacted: ${size}; full text in session log seq ${info.seq}]`
    : `[result compacted: ${size}; preview in session log seq ${info.seq}, full text at spill locator ${info.locator}]`;
}

// Locale-independent so the prompt (and its size) is identical in every runtime.
function groupThousands(n: number): string {
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
