/**
 * Model-based tests of the toolCall machine: every planned path (see `toolCall.model.ts`) played
 * against the real runtime, inside a turn and as a lone `rt.runCall`, asserting the transitions
 * taken, the state after each step, the result code and the call's log events.
 */
import { describe, expect, it } from 'vitest';
import { expectChecks } from './suite.js';
import { planToolCallPaths } from './toolCall.model.js';
import { runToolCallPath } from './toolCall.scenario.js';

const { paths, deadEnds } = planToolCallPaths();

describe('toolCall paths', () => {
  it('every reachable state can still settle', () => expect(deadEnds).toEqual([]));

  describe('inside a turn (rt.startTurn, observed with inspect)', () => {
    it.each(paths.map((p) => [p.name, p] as const))('%s', async (_name, path) => {
      expectChecks(await runToolCallPath(path, 'turn'));
    });
  });

  describe('as a lone call (rt.runCall)', () => {
    it.each(paths.map((p) => [p.name, p] as const))('%s', async (_name, path) => {
      expectChecks(await runToolCallPath(path, 'runCall'));
    });
  });
});
