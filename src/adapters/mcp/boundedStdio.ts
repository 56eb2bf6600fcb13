/**
 * The stdio transport of an MCP server, bounded (issue 31 item 9), in place of the SDK's
 * `StdioClientTransport` (whose reader copies its whole buffer on every chunk, handles every
 * message of a chunk in one go, and whose `close()` leaves the server's children running):
 * - **Lines are read in linear time**: each chunk is scanned once for newlines; a line is joined
 *   only when it ends.
 * - **A line over `maxMessageBytes` fails at once**: `onerror` gets a `MessageTooLargeError` the
 *   moment the line crosses the bound (nothing more of it is kept), and the transport closes: the
 *   pending calls fail now, not at their time limit, and nothing more is read from that stream.
 * - **No stall under volume**: at most `MESSAGES_PER_TICK` messages are handed on per turn of the
 *   event loop; past that, reading pauses (the pipe pushes back on the server) and goes on in the
 *   next turn.
 * - **`close()` leaves no process**: the server runs in a process group of its own; close ends
 *   its stdin, sends SIGTERM to the group, SIGKILL after `killGraceMs`, and resolves once the
 *   server has exited. `onclose` fires at the start of close (so pending calls fail at once).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Messages handed on per turn of the event loop before reading yields. */
export const MESSAGES_PER_TICK = 256;
/** How long a server has after SIGTERM before its process group is killed. */
export const DEFAULT_KILL_GRACE_MS = 1_000;

/** A stdio line longer than the server's `maxMessageBytes`. */
export class MessageTooLargeError extends Error {
  override readonly name = 'MessageTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`a message over ${maxBytes} bytes (the server's maxMessageBytes); the connection is closed`);
  }
}

export interface BoundedStdioOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly maxMessageBytes: number;
  readonly killGraceMs?: number;
}

/** Splits a byte stream into lines in linear time, refusing one longer than `max` bytes. */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}

  /** The complete lines of `chunk` (without `\n`, a trailing `\r` dropped); throws MessageTooLargeError. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      const line = Buffer.concat(this.parts, this.size).toString('utf8');
      this.parts = [];
      this.size = 0;
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return lines;
  }

  private take(part: Buffer): void {
    this.size += part.length;
    if (this.size > this.max) {
      this.parts = [];
      this.size = 0;
      throw new MessageTooLargeError(this.max);
    }
    if (part.length > 0) this.parts.push(part);
  }
}

export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private readonly splitter: LineSplitter;
  private readonly queue: string[] = [];
  private budget = MESSAGES_PER_TICK;
  private resetScheduled = false;
  private closedOnce = false;
  private readonly stderrStream = new PassThrough();

  constructor(private readonly options: BoundedStdioOptions) {
    this.splitter = new LineSplitter(options.maxMessageBytes);
  }

  /** The server's stderr (available before `start`, so nothing early is lost). */
  get stderr(): PassThrough {
    return this.stderrStream;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('BoundedStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...(this.options.args ?? [])], {
        env: { ...this.options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(this.options.cwd !== undefined ? { cwd: this.options.cwd } : {}),
        // A process group of its own, so close() reaches the server's children too.
        detached: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('error', (e) => {
        reject(e);
        this.onerror?.(e);
      });
      child.once('spawn', () => resolve());
      // The end of the stream (after the last bytes were read), not of the process.
      child.once('close', () => this.finish());
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.stdout!.on('error', (e) => this.onerror?.(e));
      child.stderr!.pipe(this.stderrStream);
      child.stdout!.on('data', (chunk: Buffer) => {
        if (this.closedOnce) return;
        let lines: string[];
        try {
          lines = this.splitter.push(chunk);
        } catch (e) {
          this.onerror?.(e as Error);
          void this.close();
          return;
        }
        for (const l of lines) this.queue.push(l);
        this.drain();
      });
    });
  }

  /**
   * Hands on queued messages. The budget of MESSAGES_PER_TICK is shared by everything handed on
   * between two turns of the event loop (a reset is scheduled at the first message after one);
   * once it is spent, reading pauses (the pipe pushes back on the server) until the reset.
   */
  private drain(): void {
    while (this.queue.length > 0 && !this.closedOnce) {
      if (this.budget === 0) {
        this.child?.stdout?.pause();
        return;
      }
      if (!this.resetScheduled) {
        this.resetScheduled = true;
        setImmediate(() => {
          this.resetScheduled = false;
          this.budget = MESSAGES_PER_TICK;
          this.drain();
        });
      }
      this.budget--;
      const line = this.queue.shift()!;
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (e) {
        this.onerror?.(e as Error);
        continue;
      }
      this.onmessage?.(message);
    }
    if (!this.closedOnce) this.child?.stdout?.resume();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.closedOnce || !stdin.writable) return reject(new Error('Not connected'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Fires `onclose` once: the connection is over (pending requests fail). */
  private finish(): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.queue.length = 0;
    this.onclose?.();
  }

  async close(): Promise<void> {
    this.finish();
    const child = this.child;
    // Never started (spawn failed: no 'exit' will come), or already exited: its group may remain.
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      if (child?.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      return;
    }
    try {
      child.stdin?.end();
    } catch {
      // already gone
    }
    const pid = child.pid;
    signalGroup(pid, 'SIGTERM');
    const grace = this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), grace)));
    const outcome = await Promise.race([this.exited!.then(() => 'exited' as const), late]);
    clearTimeout(timer);
    // The group: children that outlive the server (or ignore SIGTERM) are killed either way.
    signalGroup(pid, 'SIGKILL');
    if (outcome === 'late') await this.exited;
  }
}

/** Sends `signal` to the process group `pid` leads (and to `pid` itself); a gone group is fine. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}
