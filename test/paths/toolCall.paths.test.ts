/**
 * Model-based tests of the toolCall machine: every planned path (see `toolCall.model.ts`) played
 * against the real runtime, inside a turn and as a lone `rt.runCall`, asserting the transitions
 * taken, the state after each step, the result code and the call's log events, and judging the
 * result by SPEC (`toolCall.oracle.ts`). The last tests check that these runs covered the machine.
 */
import { createMachine, type AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { toolCallMachine } from '../../machines/toolCall.js';
import { uncovered } from '../../src/testing/paths/coverage.js';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';
import { planToolCallPaths } from './toolCall.model.js';
import { runToolCallPath, type ToolCallDriver } from './toolCall.scenario.js';

/** toolCall with one more stage that no path reaches: what the coverage test must catch. */
function toolCallWithAnUntestedStage(): AnyStateMachine {
  const config = toolCallMachine.config as { states: Record<string, { on?: Record<string, unknown> }> };
  return createMachine(
    {
      ...(toolCallMachine.config as object),
      states: {
        ...config.states,
        awaitingApproval: { ...config.states.awaitingApproval, on: { ...config.states.awaitingApproval!.on, 'APPROVAL.ESCALATED': 'escalated' } },
        escalated: { on: { 'APPROVAL.ANSWERED': 'guard' } },
      },
    } as never,
    toolCallMachine.implementations as never,
  );
}

const { paths, deadEnds } = planToolCallPaths();
const coverage = new PathCoverage('toolCall', { 'with an untested stage': toolCallWithAnUntestedStage() });
const drivers: ReadonlyArray<[ToolCallDriver, string]> = [
  ['turn', 'inside a turn (rt.startTurn, observed with inspect)'],
  ['runCall', 'as a lone call (rt.runCall)'],
];

describe('toolCall paths', () => {
  it('every reachable state can still settle', () => expect(deadEnds).toEqual([]));

  for (const [driver, title] of drivers) {
    describe(title, () => {
      it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
        const run = await runToolCallPath(path, driver);
        coverage.record(`${name} (${driver})`, run);
        expectChecks(run);
      });
    });
  }

  coverage.defineTest(drivers.flatMap(([driver]) => paths.map((p) => `${p.name} (${driver})`)));

  it('a stage added to the machine without a path is reported, by name', () => {
    expect(coverage.runs, 'the paths did not run').toBeGreaterThan(0);
    expect(uncovered(coverage.report('with an untested stage'))).toEqual([
      'toolCall: state toolCall.escalated is not reached by any path',
      'toolCall: transition awaitingApproval: APPROVAL.ESCALATED → escalated is not taken by any path',
      'toolCall: transition escalated: APPROVAL.ANSWERED → guard is not taken by any path',
    ]);
  });
});
