import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../toolError.js';
import type { SpillLineIndex } from './lineIndex.js';

/** What the policy tells a store about a spill; a store may keep it, it is never needed to read. */
export interface SpillMeta {
  readonly callId: string;
  readonly toolName: string;
  readonly turnId?: string;
  readonly stepIndex?: number;
}

/** Options of one save: a signal that aborts a save that hangs. */
export interface SpillSaveOptions {
  readonly signal?: AbortSignal;
}

/** A byte range of a spilled text, in UTF-8 bytes. Defaults: from 0, to the end. */
export interface SpillRange {
  readonly offset?: number;
  readonly length?: number;
}

/**
 * One piece of a spilled text. Both ends sit on character boundaries, so following `nextOffset`
 * until `done` and joining the pieces gives the saved text exactly.
 */
export interface SpillChunk {
  readonly text: string;
  /** Where this chunk starts (the requested offset, moved back to a character start if needed). */
  readonly offset: number;
  readonly nextOffset: number;
  readonly totalBytes: number;
  readonly done: boolean;
}

/**
 * Where oversized tool output is kept (SPEC §4). The locator is opaque to everyone but the store
 * that issued it: a local store may render a path, a remote one a key or URI.
 */
export interface SpillStore {
  /**
   * Saves a text whole. `options.signal` aborts when the policy stops waiting (its save deadline):
   * a store may stop writing then; the policy has already kept the output inline.
   */
  save(text: string, meta: SpillMeta, options?: SpillSaveOptions): Promise<{ locator: string }>;
  /** Reads a range of a saved text by its locator; an unknown locator is refused. */
  read(locator: string, range?: SpillRange): Promise<SpillChunk>;
  /**
   * Optional: the text's line index, built when it was saved, so a page of lines costs a read of
   * about the page (see lineIndex.ts). A store without it gets one built by reading the text once.
   */
  lineIndex?(locator: string): Promise<SpillLineIndex>;
}

/** A locator this store did not issue (or no longer holds): reads fail with `FS_NOT_FOUND`. */
export class UnknownLocatorError extends ToolError {
  constructor(locator: string) {
    super(ErrorCode.FS_NOT_FOUND, `no spilled output under locator ${JSON.stringify(locator)} in this session`);
  }
}

/** Reads a whole spilled text by following its chunks. */
export async function readAllSpilled(store: SpillStore, locator: string): Promise<string> {
  const parts: string[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await store.read(locator, { offset });
    parts.push(chunk.text);
    if (chunk.done || chunk.nextOffset <= offset) break;
    offset = chunk.nextOffset;
  }
  return parts.join('');
}
