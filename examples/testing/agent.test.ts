/**
 * Testing your own agent with dsh/testing: `explore` runs the refund desk through every approval
 * answer, body ending, completion order, cancel and crash its configuration allows, and judges
 * each run by dsh's SPEC and by the desk's own promises.
 */
import { explore, formatReport, scriptedModel, type ExploreOptions } from 'dsh/testing';
import { describe, expect, it } from 'vitest';
import { refundDesk, type Ledger } from './agent.js';

function exploreDesk(refundsAreIdempotent: boolean): ExploreOptions {
  // One ledger per run: every process of a run (a crash, then a resume) pays from the same one.
  const ledgers = new Map<number, Ledger>();
  const ledgerOf = (run: number) => ledgers.get(run) ?? ledgers.set(run, new Map()).get(run)!;
  return {
    runtime: (world) => refundDesk(world, { ledger: ledgerOf(world.run), refundsAreIdempotent }),
    turn: {
      input: 'refund orders A-1 and B-2',
      model: scriptedModel([
        { toolCalls: [{ toolName: 'lookupOrder', input: { order: 'A-1' } }, { toolName: 'lookupOrder', input: { order: 'B-2' } }] },
        { toolCalls: [{ toolName: 'refund', input: { order: 'A-1' } }, { toolName: 'refund', input: { order: 'B-2' } }] },
        { text: 'Both orders are refunded.' },
      ]),
    },
    invariants: {
      'an order is refunded at most once': (run) => {
        const twice = [...ledgerOf(run.index)].find(([, paid]) => paid.length > 1);
        return twice === undefined || `order ${twice[0]} was refunded ${twice[1].length} times`;
      },
      'a refund over 100 is paid only when a person said yes': (run) => {
        const paid = (ledgerOf(run.index).get('B-2') ?? []).length > 0;
        const yes = run.events.some((e) => e.type === 'tool/approval-answer' && (e.answer === 'allowed-once' || e.answer === 'allowed-always'));
        return !paid || yes || 'B-2 was refunded without a yes';
      },
    },
    maxRuns: 400,
    maxDeviations: 2,
    failureLogs: false,
  };
}

describe('the refund desk', () => {
  it('explore finds the planted bug: a refund paid twice after a crash and a resume', async () => {
    const report = await explore(exploreDesk(false));
    // What a person reads: the failure's steps, its log file, how to replay it, the coverage.
    expect(formatReport(report)).toContain('✗ an order is refunded at most once: order A-1 was refunded 2 times');
    expect(report.failures.map((f) => f.invariant)).toEqual(['an order is refunded at most once']);
    const [failure] = report.failures;
    // The shortest path: one crash, right before a refund's result is durable.
    expect(failure!.path.filter((choice) => choice !== 0)).toHaveLength(1);
    expect(failure!.steps.some((s) => /^the process dies before event #\d+ \(tool\/result call-2-0\) is durable$/.test(s))).toBe(true);
  });

  it('with idempotent refunds, no run fails', async () => {
    const report = await explore(exploreDesk(true));
    expect(report.failures).toEqual([]);
    // What the configuration cannot make happen, in plain words.
    expect(report.coverage.unreached).toContain('`lookupOrder` is never asked about');
  });
});
