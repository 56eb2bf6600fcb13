/**
 * Where lines start in a spilled text: a sparse index, built while the text is saved (or by reading
 * it once), so a page of lines costs a read of about the page. Pure: it knows no store.
 */

/** Most bytes between a line start and the checkpoint before it (default 16 KiB). */
export const DEFAULT_LINE_INDEX_STRIDE = 16_384;
const NL = 0x0a;

/**
 * Where lines start in a spilled text, sparsely. Checkpoints are line starts: line 1 at byte 0,
 * then the first line start at least `stride` bytes after the previous checkpoint. So any line
 * starts less than `stride` bytes after the last checkpoint at or before it, and a line at least
 * `stride` bytes long is always followed by a checkpoint.
 */
export interface SpillLineIndex {
  readonly totalBytes: number;
  /** Lines as an editor counts them: a last line without a newline still counts. */
  readonly totalLines: number;
  readonly stride: number;
  /** 1-based line numbers of the checkpoints, ascending (the first is 1). */
  readonly lines: readonly number[];
  /** Byte offsets of those line starts. */
  readonly offsets: readonly number[];
}

/** Builds a `SpillLineIndex` from a text's UTF-8 bytes, fed in order in pieces of any size. */
export class LineIndexBuilder {
  private bytes = 0;
  private newlines = 0;
  private lastByte = -1;
  private lastCheckpoint = 0;
  private readonly lines: number[] = [1];
  private readonly offsets: number[] = [0];

  constructor(private readonly stride: number = DEFAULT_LINE_INDEX_STRIDE) {
    this.stride = Math.max(1, Math.floor(stride));
  }

  /** Feeds the next bytes of the text. */
  push(piece: Uint8Array): void {
    for (let i = piece.indexOf(NL); i !== -1; i = piece.indexOf(NL, i + 1)) {
      this.newlines++;
      const start = this.bytes + i + 1;
      if (start - this.lastCheckpoint >= this.stride) {
        this.lines.push(this.newlines + 1);
        this.offsets.push(start);
        this.lastCheckpoint = start;
      }
    }
    if (piece.length > 0) this.lastByte = piece[piece.length - 1]!;
    this.bytes += piece.length;
  }

  /** The index of every byte pushed so far. */
  finish(): SpillLineIndex {
    return Object.freeze({
      totalBytes: this.bytes,
      totalLines: this.newlines + (this.bytes > 0 && this.lastByte !== NL ? 1 : 0),
      stride: this.stride,
      lines: Object.freeze(this.lines.slice()),
      offsets: Object.freeze(this.offsets.slice()),
    });
  }
}
