/**
 * `dsh policy replay`'s tally (src/cli/policy/replay.ts `createReplayTally`, `failsOn`): each
 * recorded call checked against today's policies, counted unchanged, changed (by `then → now`),
 * not compared (the checker threw, or the call is invalid now), and failing under `--fail-on`; the
 * list of changes and of problems bounded (issue 26 item 3). Expected figures come from the
 * command's documented report (docs/cli.md), with a stand-in checker.
 */
import { describe, expect, it } from 'vitest';
import { createReplayTally, failsOn, MAX_LISTED_CHANGES, type RecordedCall, type ReplayChange } from '../../src/cli/policy/replay.js';
import type { PolicyChecker, PolicyVerdict } from '../../src/runtime/policies/policyCheck.js';

const recorded = (callId: string, then: RecordedCall['then'], ran: boolean): RecordedCall => ({ session: 's1', turnId: 't', callId, toolName: 'bash', input: { command: callId }, then, ran });

/** A checker that answers each call by its callId (its `command`). */
function checker(answers: Record<string, PolicyVerdict | Error>): PolicyChecker {
  return {
    check: async ({ input }) => {
      const a = answers[(input as { command: string }).command]!;
      if (a instanceof Error) throw a;
      return a;
    },
  } as PolicyChecker;
}

describe('a replay tally', () => {
  it('counts unchanged, changed by transition, not compared; lists each change with who decides now and why', async () => {
    const tally = createReplayTally(
      checker({
        same: { outcome: 'allow' },
        tighter: { outcome: 'deny', decision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions' }, reason: 'no rm' },
        looser: { outcome: 'allow' },
        asked: { outcome: 'ask', reason: 'a person looks' },
        invalid: { outcome: 'invalid' },
        broken: new Error('the hook program is gone'),
      }),
      ['ran-now-denied'],
    );
    await tally.check(recorded('same', 'allow', true));
    await tally.check(recorded('tighter', 'allow', true));
    await tally.check(recorded('looser', 'deny', false));
    await tally.check(recorded('asked', 'allow', true));
    await tally.check(recorded('invalid', 'allow', true));
    await tally.check(recorded('broken', 'allow', true));
    tally.skip(2);
    const report = tally.report(3);
    // Strict: a change carries `nowDecision` and `nowReason` only when the checker gave them.
    expect(report).toStrictEqual({
      sessions: 3,
      calls: 6,
      skipped: 4,
      unchanged: 1,
      changes: [
        { ...recorded('tighter', 'allow', true), now: 'deny', nowDecision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions' }, nowReason: 'no rm' },
        { ...recorded('looser', 'deny', false), now: 'allow' },
        { ...recorded('asked', 'allow', true), now: 'ask', nowReason: 'a person looks' },
      ],
      omitted: 0,
      failing: 1,
      transitions: { 'allow → deny': 1, 'deny → allow': 1, 'allow → ask': 1 },
      problems: ['s1 broken: not compared: Error: the hook program is gone'],
    });
  });

  it(`lists at most ${MAX_LISTED_CHANGES} changes and problems; the rest are counted (omitted, transitions, failing)`, async () => {
    const tally = createReplayTally(checker({ c: { outcome: 'deny' }, x: new Error('gone') }), ['any-change']);
    for (let i = 0; i < MAX_LISTED_CHANGES + 3; i++) await tally.check({ ...recorded('c', 'allow', true), callId: `c${i}` });
    for (let i = 0; i < MAX_LISTED_CHANGES + 2; i++) await tally.check({ ...recorded('x', 'allow', true), callId: `x${i}` });
    const report = tally.report(1);
    expect(report.changes).toHaveLength(MAX_LISTED_CHANGES);
    expect(report.changes.at(-1)!.callId).toBe(`c${MAX_LISTED_CHANGES - 1}`);
    expect(report.omitted).toBe(3);
    expect(report.failing).toBe(MAX_LISTED_CHANGES + 3);
    expect(report.transitions).toEqual({ 'allow → deny': MAX_LISTED_CHANGES + 3 });
    expect(report.problems).toHaveLength(MAX_LISTED_CHANGES);
    expect(report.problems[0]).toBe('s1 x0: not compared: Error: gone');
    expect(report.skipped).toBe(MAX_LISTED_CHANGES + 2);
    expect(report.calls).toBe(2 * MAX_LISTED_CHANGES + 5);
  });
});

describe('--fail-on', () => {
  const change = (ran: boolean, then: RecordedCall['then'], now: ReplayChange['now']): ReplayChange => ({ ...recorded('c', then, ran), now });
  it("hands the checker a call's recorded content only when it has one", async () => {
    const seen: unknown[] = [];
    const tally = createReplayTally({ check: async (c) => (seen.push(c), { outcome: 'allow' }) } as PolicyChecker, []);
    await tally.check({ ...recorded('with', 'allow', true), content: 'the output' });
    await tally.check(recorded('without', 'allow', true));
    expect(seen).toStrictEqual([
      { toolName: 'bash', input: { command: 'with' }, content: 'the output' },
      { toolName: 'bash', input: { command: 'without' } },
    ]);
  });

  it('ran-now-denied: a call whose body ran then and that would be denied now', () => {
    expect(failsOn(change(true, 'allow', 'deny'), ['ran-now-denied'])).toBe(true);
    expect(failsOn(change(true, 'ask', 'deny'), ['ran-now-denied'])).toBe(true);
    expect(failsOn(change(false, 'ask', 'deny'), ['ran-now-denied'])).toBe(false);
    expect(failsOn(change(true, 'allow', 'ask'), ['ran-now-denied'])).toBe(false);
  });
  it('denied-now-runs: a call refused then (by a policy or a person) that would now run without a question', () => {
    expect(failsOn(change(false, 'deny', 'allow'), ['denied-now-runs'])).toBe(true);
    expect(failsOn(change(false, 'ask', 'allow'), ['denied-now-runs'])).toBe(true);
    expect(failsOn(change(false, 'deny', 'ask'), ['denied-now-runs'])).toBe(false);
    expect(failsOn(change(true, 'ask', 'allow'), ['denied-now-runs'])).toBe(false);
  });
  it('any-change fails on every change; no --fail-on fails on none; several are any of them', () => {
    expect(failsOn(change(true, 'allow', 'ask'), ['any-change'])).toBe(true);
    expect(failsOn(change(true, 'allow', 'deny'), [])).toBe(false);
    expect(failsOn(change(false, 'deny', 'allow'), ['ran-now-denied', 'denied-now-runs'])).toBe(true);
  });
});
