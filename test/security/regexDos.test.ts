/**
 * Issue 10 item 3: a pattern from the model must not freeze the process. `^(a+)+$` over a line of
 * `a`s and a `!` takes exponential time in a backtracking engine (each `a` doubles it), and a
 * synchronous match cannot be interrupted by any timeout or cancel: every session in the process
 * stalls. grep matches with RE2 (linear time), so the call settles and the timers keep firing.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFsSpillStore } from '../../src/adapters/spill/fsSpillStore.js';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { timeout } from '../../src/runtime/wrappers/timeout.js';
import { call, tempDir } from '../adapters/workspaceFixture.js';

// 28 `a`s: about 2^28 backtracking steps per line, about 10 s in V8's RegExp (27 took 4.6 s).
const EVIL = `${'a'.repeat(28)}!`;
/** Far above any pause a loaded machine makes between 5 ms ticks; far below a backtracking match. */
const HANG_BOUND_MS = 4000;

async function session() {
  const root = await tempDir();
  await writeFile(join(root, 'evil.txt'), `${EVIL}\naaaa\n`);
  const store = createFsSpillStore({ baseDir: await tempDir() });
  const rt = createRuntime({ tools: [...createBuiltinTools({ root, spillStore: store }).all], spillStore: store, maxInlineBytes: 1024 });
  // A deadline as an application would set one: it must be met, not merely reported.
  rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 15_000 }));
  return { rt, store };
}

/** Runs `work` while a 5 ms interval ticks; returns its value and the longest pause between ticks. */
async function whileTicking<T>(work: () => Promise<T>): Promise<{ value: T; ticks: number; longestPauseMs: number }> {
  let last = performance.now();
  let longest = 0;
  let ticks = 0;
  const beat = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(() => {
    ticks++;
    beat();
  }, 5);
  try {
    const value = await work();
    beat();
    // One more tick after the call: the loop is still alive.
    await new Promise((r) => setTimeout(r, 20));
    return { value, ticks, longestPauseMs: longest };
  } finally {
    clearInterval(timer);
  }
}

describe('the regex', () => {
  it('settles within its deadline while timers keep firing (workspace files)', async () => {
    const { rt, store } = await session();
    try {
      const { value: r, ticks, longestPauseMs } = await whileTicking(() => call(rt, 'grep', { pattern: '^(a+)+$', path: 'evil.txt' }));
      expect(r.isError).toBe(false);
      // A true answer, not "no matches": the one line that matches is found.
      expect(r.content).toBe('evil.txt:2:aaaa\n');
      expect(ticks).toBeGreaterThan(0);
      expect(longestPauseMs).toBeLessThan(HANG_BOUND_MS);
    } finally {
      await store.remove();
    }
  });

  it('settles within its deadline while timers keep firing (a spilled output, by locator)', async () => {
    const { rt, store } = await session();
    try {
      // A spilled output full of attack lines, searched by its locator.
      rt.tools.register(
        (await import('../../src/runtime/defineTool.js')).defineTool({
          name: 'dump',
          description: 'prints attack lines',
          input: (await import('zod')).z.object({}),
          execute: () => `${'b'.repeat(80)}\n`.repeat(100) + `${EVIL}\naaaa\n`,
        }),
      );
      const dumped = await call(rt, 'dump', {});
      const locator = (dumped.metadata.spill as { locator: string }).locator;
      expect(locator).toBeTypeOf('string');
      const { value: r, longestPauseMs } = await whileTicking(() => call(rt, 'grep', { pattern: '^(a+)+$', locator }));
      expect(r.isError).toBe(false);
      expect(r.content).toBe('102:aaaa\n');
      expect(longestPauseMs).toBeLessThan(HANG_BOUND_MS);
    } finally {
      await store.remove();
    }
  });

  it('rejects what RE2 cannot run in linear time (backreferences, lookaround) or only slowly (huge programs) as INVALID_ARGS with the reason', async () => {
    const { rt, store } = await session();
    try {
      for (const [pattern, reason] of [
        ['(a)\\1', 'invalid escape sequence'],
        ['a(?=b)', 'unsupported Perl syntax'],
        ['(a', 'missing closing )'],
        ['x{1001}', 'invalid repeat count'],
        ['a'.repeat(5000), 'longer than'],
        // Linear, but each character would cost thousands of steps: refused, not run.
        ['(\\pL|\\pN){1000}x', 'too complex'],
      ] as const) {
        const r = await call(rt, 'grep', { pattern, path: 'evil.txt' });
        expect(r.isError, pattern).toBe(true);
        expect(r.error?.code).toBe(ErrorCode.INVALID_ARGS);
        expect(r.content).toContain(reason);
      }
    } finally {
      await store.remove();
    }
  });
});
