/**
 * Coverage as a test: every state node and every transition (event, `always`, `after`, child
 * done/error, with its guard) of every machine in `machineRegistry`, mapped to the runs of the
 * generated paths in which the real runtime was *observed* (XState inspection) to reach it. Fails,
 * naming the machine and the state or transition, when anything is not reached, so a stage cannot
 * be added untested. Prints the counts, e.g. `toolCall: 14/14 states, 33/33 transitions`.
 */
import { createMachine, type AnyStateMachine } from 'xstate';
import { afterAll, describe, expect, it } from 'vitest';
import { machineRegistry } from '../../machines/registry.js';
import { toolCallMachine } from '../../machines/toolCall.js';
import { CoverageMap, formatCounts, uncovered, type MachineCoverage } from './coverage.js';
import { pathSuites } from './suites.js';

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

const coverage = new CoverageMap(machineRegistry);
const withUntestedStage = new CoverageMap({ toolCall: toolCallWithAnUntestedStage() });
let report: MachineCoverage[] | undefined;
let runs = 0;

describe('coverage of every registered machine by the generated paths', () => {
  afterAll(() => {
    if (!report) return;
    // Straight to stdout, so it shows in `npm test` output whatever the reporter does with console.
    process.stdout.write(`\nmodel-based path coverage (${runs} runs against the runtime):\n${formatCounts(report)}\n\n`);
  });

  it('every registered machine has a path suite', () => {
    expect(Object.keys(machineRegistry).filter((name) => !pathSuites[name])).toEqual([]);
  });

  it('plays every planned path of every machine against the real runtime', async () => {
    const failed: string[] = [];
    for (const suite of Object.values(pathSuites)) {
      for (const { name, run } of suite.runs()) {
        try {
          const { recorder } = await run();
          coverage.record(`${suite.machine}: ${name}`, recorder);
          withUntestedStage.record(`${suite.machine}: ${name}`, recorder);
          runs++;
        } catch (e) {
          // A path that cannot be played counts for nothing; the others still make the report.
          failed.push(`${suite.machine}: ${name}: ${String(e)}`);
        }
      }
    }
    report = coverage.report();
    expect(failed).toEqual([]);
  });

  it('reaches every state and takes every transition', () => {
    expect(report, 'the paths did not run').toBeDefined();
    expect(uncovered(report!)).toEqual([]);
  });

  it('a stage added to a machine without a path is reported, by name', () => {
    expect(report, 'the paths did not run').toBeDefined();
    expect(uncovered(withUntestedStage.report())).toEqual([
      'toolCall: state toolCall.escalated is not reached by any path',
      'toolCall: transition awaitingApproval: APPROVAL.ESCALATED → escalated is not taken by any path',
      'toolCall: transition escalated: APPROVAL.ANSWERED → guard is not taken by any path',
    ]);
  });
});
