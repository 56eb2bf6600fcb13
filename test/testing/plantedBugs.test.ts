/**
 * `explore` against agents with planted bugs (issue 35's checks): each bug is found on a minimal
 * path, under the right invariant or SPEC rule; the same agents without the bug give no failure
 * over the same runs. Expected outcomes come from SPEC and from what each agent promises.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type ExecContext } from '../../src/index.js';
import { sleep } from '../../src/runtime/clock.js';
import { explore, scriptedModel, SPEC_RULES, type ExploreOptions, type ExploredRun } from '../../src/testing/index.js';

const quick = { failureLogs: false, maxRuns: 400 } as const;

/** A payment provider's ledger: outside the session, one per run (it survives the run's crashes). */
function payments(idempotent: boolean) {
  const ledger = new Map<number, number[]>();
  const charge = (run: number) =>
    defineTool({
      name: 'charge',
      input: z.object({ order: z.number() }),
      execute: ({ order }) => {
        const charged = ledger.get(run) ?? [];
        ledger.set(run, charged);
        if (idempotent && charged.includes(order)) return `order ${order} was already charged`;
        charged.push(order);
        return `charged order ${order}`;
      },
    });
  const options: ExploreOptions = {
    runtime: (world) => createRuntime({ ...world, tools: [charge(world.run)] }),
    turn: { input: 'pay order 7', model: scriptedModel([{ toolCalls: [{ toolName: 'charge', input: { order: 7 } }] }, { text: 'paid' }]) },
    invariants: {
      'charges once': (run: ExploredRun) => {
        const n = (ledger.get(run.index) ?? []).filter((o) => o === 7).length;
        return n <= 1 || `order 7 was charged ${n} times`;
      },
    },
    ...quick,
  };
  return options;
}

describe('a body with a side effect outside the log', () => {
  it('charging twice after a crash and resume is found, on the shortest path: run, crash before its result is durable, resume', async () => {
    const report = await explore(payments(false));
    expect(report.failures.map((f) => f.invariant)).toEqual(['charges once']);
    const [f] = report.failures;
    expect(f!.message).toBe('order 7 was charged 2 times');
    // Minimal: the only deviation is the crash, right before the charge's result is durable.
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(1);
    expect(f!.steps).toContain('the process dies before event #4 (tool/result call-1-0) is durable');
    // The session as found afterwards: the first call INTERRUPTED by the resume, the second charged again.
    const results = f!.log.filter((e) => e.type === 'tool/result');
    expect(results.map((e) => e.type === 'tool/result' && (e.result.error?.code ?? 'ok'))).toEqual(['INTERRUPTED', 'ok']);
  });

  it('an idempotent charge gives no failure over the same runs', async () => {
    const report = await explore(payments(true));
    expect(report.failures).toEqual([]);
    expect(report.runs).toBeGreaterThan(50);
  });
});

/**
 * A tool whose body waits on the clock it is given, through the user's own wrapper: one that passes
 * the signal on, or one that swallows it (it hands the body a signal nothing aborts). dsh's own
 * `tools/execute` wrappers cannot drop the call's signal; a wrapper inside the body can.
 */
function slowAgent(swallow: boolean): ExploreOptions {
  const timed =
    (body: (url: string, exec: ExecContext) => Promise<string>) =>
    ({ url }: { url: string }, exec: ExecContext): Promise<string> =>
      body(url, swallow ? { ...exec, signal: new AbortController().signal } : exec);
  const fetchPage = defineTool({
    name: 'fetch',
    input: z.object({ url: z.string() }),
    isConcurrencySafe: () => true,
    execute: timed(async (url, exec) => {
      await sleep(exec.clock, 10_000, exec.signal);
      return `page ${url}`;
    }),
  });
  return {
    runtime: (world) => createRuntime({ ...world, tools: [fetchPage] }),
    turn: { input: 'fetch it', model: scriptedModel([{ toolCalls: [{ toolName: 'fetch', input: { url: 'a' } }] }, { text: 'done' }]) },
    choices: { crashes: false },
    ...quick,
  };
}

describe('a wrapper that swallows the abort signal', () => {
  it('is found by SPEC: the body goes on after its call ended ABORTED', async () => {
    const report = await explore(slowAgent(true));
    const f = report.failures.find((x) => x.invariant === SPEC_RULES.signal);
    expect(f, report.failures.map((x) => x.invariant).join('; ')).toBeDefined();
    expect(f!.message).toMatch(/call-1-0 \(fetch\) ended (ABORTED|TIMEOUT) \(event #\d+\) while its body went on until after event #\d+/);
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(1);
  });

  it('a wrapper that passes the signal on gives no failure', async () => {
    const report = await explore(slowAgent(false));
    expect(report.failures).toEqual([]);
  });
});

function auditedSearch(careful: boolean): ExploreOptions {
  const search = defineTool({
    name: 'search',
    input: z.object({ q: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ q }) => ({ hits: q === 'dsh' ? ['docs/testing.md'] : [] }),
  });
  return {
    runtime: (world) => {
      const rt = createRuntime({ ...world, tools: [search] });
      rt.hooks.on('tools/post-execute', 'audit-first-hit', (draft) => {
        const hits = (draft.value as { hits: string[] }).hits;
        if (careful && hits.length === 0) return;
        // The planted bug: the first hit's name, when there is none.
        if (hits[0]!.length > 200) return { kind: 'block', feedback: 'hit too long' } as const;
      });
      return rt;
    },
    turn: {
      input: 'search',
      model: scriptedModel([{ toolCalls: [{ toolName: 'search', input: { q: 'dsh' } }, { toolName: 'search', input: { q: 'nothing-here' } }] }, { text: 'done' }]),
    },
    choices: { crashes: false },
    ...quick,
  };
}

describe('a post-execute listener that throws for one result shape', () => {
  it('the HOOK_FAILED path is found and the listener named', async () => {
    const report = await explore(auditedSearch(false));
    const f = report.failures.find((x) => x.invariant === SPEC_RULES.listeners);
    expect(f).toBeDefined();
    expect(f!.message).toMatch(/^listener "audit-first-hit" on tools\/post-execute failed for call-1-1: /);
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(0);
  });

  it('the careful listener gives no failure', async () => {
    expect((await explore(auditedSearch(true))).failures).toEqual([]);
  });
});

/** Two concurrency-safe calls numbering themselves from shared state: right only if they finish in the model's order. */
function numbered(perCall: boolean): ExploreOptions {
  return {
    runtime: (world) => {
      let taken = 0;
      const ticket = defineTool({
        name: 'ticket',
        input: z.object({ n: z.number() }),
        isConcurrencySafe: () => true,
        // The planted bug: the number comes from the order bodies finish in, not from the call.
        execute: ({ n }) => (perCall ? n : ++taken),
      });
      return createRuntime({ ...world, tools: [ticket] });
    },
    turn: { input: 'two tickets', model: scriptedModel([{ toolCalls: [{ toolName: 'ticket', input: { n: 1 } }, { toolName: 'ticket', input: { n: 2 } }] }, { text: 'done' }]) },
    invariants: {
      'each call gets its own number': (run) => {
        const got = run.events.flatMap((e) => (e.type === 'tool/result' && !e.result.isError ? [[e.callId, e.result.content] as const] : []));
        const wrong = got.find(([callId, content]) => content !== String(Number(callId.split('-')[2]) + 1));
        return wrong === undefined || `${wrong[0]} got number ${wrong[1]}`;
      },
    },
    choices: { crashes: false },
    ...quick,
  };
}

describe('a concurrency-safe tool sharing state across calls', () => {
  it('the completion order that gives a wrong answer is found', async () => {
    // Bodies end only as they do (no injected failure): what varies is the order they finish in.
    const report = await explore({ ...numbered(false), choices: { crashes: false, bodies: false } });
    const f = report.failures.find((x) => x.invariant === 'each call gets its own number');
    expect(f).toBeDefined();
    // Minimal: the second call's body finishes first, nothing else.
    expect(f!.steps).toContain('call-1-1 ticket: its body runs');
    expect(f!.steps.indexOf('call-1-1 ticket: its body runs')).toBeLessThan(f!.steps.indexOf('call-1-0 ticket: its body runs'));
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(1);
    expect(f!.message).toBe('call-1-0 got number 2');
  });

  it('with every body ending explored too, the shortest failing path has one deviation', async () => {
    const report = await explore(numbered(false));
    const f = report.failures.find((x) => x.invariant === 'each call gets its own number');
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(1);
  });

  it('numbers taken from the call give no failure', async () => {
    expect((await explore(numbered(true))).failures).toEqual([]);
  });
});

describe('a listener or guard that fails (explore makes each throw on some path)', () => {
  it('a redacting post-execute listener that fails still lets no secret through (SPEC §5: it fails closed), and it is no failure of the agent', async () => {
    const env = defineTool({ name: 'env', input: z.object({}), isConcurrencySafe: () => true, execute: () => 'HOME=/root\nAPI_KEY=sk-secret' });
    let injected = 0;
    const report = await explore({
      runtime: (world) => {
        const rt = createRuntime({ ...world, tools: [env] });
        rt.hooks.on('tools/post-execute', 'redact', (draft) => ({ kind: 'accept', content: draft.content.replace(/sk-\w+/g, '[redacted]') }));
        rt.tools.guard(() => undefined, 'allow-all');
        return rt;
      },
      turn: { input: 'show env', model: scriptedModel([{ toolCalls: [{ toolName: 'env', input: {} }] }, { text: 'done' }]) },
      invariants: {
        'no secret reaches the model': (run) => {
          if (run.events.some((e) => e.type === 'hook/failed' && e.message.includes('injected by explore'))) injected++;
          const leaked = run.events.find((e) => e.type === 'tool/result' && e.result.content.includes('sk-secret'));
          return leaked === undefined || `the secret is in tool/result #${leaked.seq}`;
        },
      },
      choices: { crashes: false },
      ...quick,
    });
    expect(report.failures).toEqual([]);
    expect(injected).toBeGreaterThan(0);
  });

  it('an agent that counts on its listener running is found when the listener throws', async () => {
    const pay = defineTool({ name: 'pay', input: z.object({}), execute: () => 'paid' });
    const report = await explore({
      runtime: (world) => {
        const rt = createRuntime({ ...world, tools: [pay] });
        rt.hooks.on('tools/pre-execute', 'audit', () => undefined);
        return rt;
      },
      turn: { input: 'pay', model: scriptedModel([{ toolCalls: [{ toolName: 'pay', input: {} }] }, { text: 'done' }]) },
      invariants: { 'every call is paid': (run) => run.events.some((e) => e.type === 'tool/result' && e.result.content === 'paid') || 'the payment did not go through' },
      choices: { crashes: false, approvals: false, bodies: false, cancels: false },
      ...quick,
    });
    const f = report.failures.find((x) => x.invariant === 'every call is paid');
    expect(f!.steps).toContain('call-1-0 pay: pre-execute listener "audit" throws');
    expect(f!.path.filter((c) => c !== 0)).toHaveLength(1);
  });
});

describe('a tool with a finalizeContent', () => {
  it('gives no false alarm over every path, crashes, slow answers and cancels included', async () => {
    const stamp = defineTool({
      name: 'stamp',
      input: z.object({ n: z.number() }),
      isConcurrencySafe: () => true,
      execute: ({ n }) => `n=${n}`,
      finalizeContent: (content) => `${content} (stamped)`,
    });
    const report = await explore({
      runtime: (world) => createRuntime({ ...world, tools: [stamp] }),
      turn: { input: 'stamp', model: scriptedModel([{ toolCalls: [{ toolName: 'stamp', input: { n: 1 } }, { toolName: 'stamp', input: { n: 2 } }] }, { text: 'done' }]) },
      ...quick,
    });
    expect(report.failures).toEqual([]);
    expect(report.runs).toBeGreaterThan(100);
  });
});

describe('the same seed, the same runs', () => {
  it('two explorations report the same runs, failures and coverage', async () => {
    const summary = async () => {
      const r = await explore({ ...numbered(false), maxDeviations: 1, maxRuns: 60, seed: 7 });
      return { runs: r.runs, sampled: r.sampled, cut: r.cut, exhaustive: r.exhaustive, failures: r.failures.map((f) => [f.invariant, f.path, f.steps]), coverage: r.coverage };
    };
    const a = await summary();
    expect(a.sampled).toBeGreaterThan(0);
    expect(await summary()).toEqual(a);
  });

  it('a failure replays from its path', async () => {
    const first = await explore(payments(false));
    const again = await explore({ ...payments(false), replay: first.failures[0]!.path });
    expect(again.runs).toBe(1);
    expect(again.failures.map((f) => [f.invariant, f.message, f.steps])).toEqual([[first.failures[0]!.invariant, first.failures[0]!.message, first.failures[0]!.steps]]);
  });
});
