/**
 * A tool for tests whose body does what the test says: answers at once, throws, hangs, streams
 * progress, or waits until the test finishes it (`onCue`). Every call is recorded with its
 * arguments and signal, so a test can see what ran and steer what is still running.
 */
import { z } from 'zod';
import { defineTool, type ExecContext, type ToolDefinition } from '../../runtime/defineTool.js';
import type { ToolProgress } from '../../runtime/pipeline/progress.js';

/** A fake tool: its name, whether it is concurrency-safe, and what its body does. */
export interface FakeToolOptions {
  name: string;
  /** The input schema (default: any object). */
  input?: z.ZodType;
  /** The value each call returns (or a function of its arguments); the default is `ok`. */
  returns?: unknown | ((args: unknown) => unknown);
  /** Each call throws this instead. */
  throws?: unknown;
  /** Each call never finishes on its own: it rejects when its signal aborts, or never if `ignoresSignal`. */
  hangs?: boolean;
  /** Each call waits for the test: `tool.calls[i].finish(value)`, `.fail(error)`, `.progress(update)`. */
  onCue?: boolean;
  /** Progress each call reports before it finishes (logged as `tool/progress`). */
  progress?: readonly ToolProgress[];
  /** The body goes on when its signal aborts (a tool that does not honour cancellation: SPEC §5). */
  ignoresSignal?: boolean;
  isConcurrencySafe?: boolean;
  readOnly?: boolean;
}

/** One call of a fake tool, as its body saw it. */
export interface FakeToolCall {
  readonly callId: string;
  readonly args: unknown;
  readonly signal: AbortSignal;
  /** Whether the body has settled. */
  readonly settled: boolean;
  /** Finishes an `onCue` (or hanging) call with a value. */
  finish(value?: unknown): void;
  /** Fails an `onCue` (or hanging) call. */
  fail(error: unknown): void;
  /** Reports progress from the running body. */
  progress(update: ToolProgress): void;
}

export interface FakeTool extends ToolDefinition<z.ZodType, unknown> {
  /** Every call the body received, in order. */
  readonly calls: readonly FakeToolCall[];
  /** Resolves with the next call the body receives (or the latest, if one came since the last `nextCall`). */
  nextCall(): Promise<FakeToolCall>;
}

/**
 * A tool whose body does what the options say.
 *
 * @example
 * ```ts
 * const deploy = fakeTool({ name: 'deploy', onCue: true });
 * const turn = rt.startTurn({ model, input: 'deploy' });
 * const call = await deploy.nextCall();
 * call.progress({ message: 'halfway' });
 * call.finish('deployed');
 * ```
 */
export function fakeTool(options: FakeToolOptions): FakeTool {
  const calls: FakeToolCall[] = [];
  let seen = 0;
  const waiting: Array<(call: FakeToolCall) => void> = [];
  const tool = defineTool({
    name: options.name,
    input: options.input ?? z.object({}).passthrough(),
    isConcurrencySafe: () => options.isConcurrencySafe === true,
    readOnly: options.readOnly === true,
    execute: (args: unknown, exec: ExecContext) =>
      new Promise<unknown>((resolve, reject) => {
        let settled = false;
        const settle = (f: () => void) => {
          if (settled) return;
          settled = true;
          f();
        };
        const call: FakeToolCall = {
          callId: exec.callId,
          args,
          signal: exec.signal,
          get settled() {
            return settled;
          },
          finish: (value = 'ok') => settle(() => resolve(value)),
          fail: (error) => settle(() => reject(error)),
          progress: (update) => exec.progress(update),
        };
        calls.push(call);
        const waiter = waiting.shift();
        if (waiter) {
          seen = calls.length;
          waiter(call);
        }
        if (!options.ignoresSignal) exec.signal.addEventListener('abort', () => call.fail(exec.signal.reason), { once: true });
        for (const update of options.progress ?? []) exec.progress(update);
        if (options.onCue || options.hangs) return;
        if (options.throws !== undefined) return call.fail(options.throws);
        const returns = options.returns ?? 'ok';
        try {
          call.finish(typeof returns === 'function' ? (returns as (a: unknown) => unknown)(args) : returns);
        } catch (e) {
          call.fail(e);
        }
      }),
  });
  return Object.freeze({
    ...tool,
    get calls() {
      return calls;
    },
    nextCall: () => (seen < calls.length ? Promise.resolve(calls[(seen = calls.length) - 1]!) : new Promise<FakeToolCall>((r) => waiting.push(r))),
  }) as FakeTool;
}
