/**
 * Tells, in one pass over streamed argument text, when a JSON object has closed: the top-level `}`
 * outside strings. A tool call's input is an object, so once it closes nothing the provider still
 * sends can belong to it. Linear in the input, whatever the model sends.
 */
/** Beyond these the text is left to the provider's own end of input (and the pipeline's arg limits). */
export const EARLY_END_LIMITS = { maxChars: 1 << 20, maxDepth: 64 } as const;

export class JsonObjectEnd {
  private chars = 0;
  private depth = 0;
  private started = false;
  private inString = false;
  private escaped = false;
  /** The text is not an object (or has something after it): completion must come from the provider. */
  invalid = false;
  complete = false;

  /** Feeds one delta; returns true once the object has closed (and nothing but whitespace followed). */
  feed(delta: string): boolean {
    this.chars += delta.length;
    if (this.chars > EARLY_END_LIMITS.maxChars) this.invalid = true;
    for (let i = 0; i < delta.length && !this.invalid; i++) {
      const c = delta.charCodeAt(i);
      if (this.complete) {
        if (!isSpace(c)) this.invalid = true;
        continue;
      }
      if (!this.started) {
        if (isSpace(c)) continue;
        if (c !== 0x7b /* { */) {
          this.invalid = true;
          continue;
        }
        this.started = true;
        this.depth = 1;
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c /* \ */) this.escaped = true;
        else if (c === 0x22 /* " */) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (++this.depth > EARLY_END_LIMITS.maxDepth) this.invalid = true;
      }
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0) this.complete = true;
      }
    }
    if (this.invalid) this.complete = false;
    return this.complete;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
