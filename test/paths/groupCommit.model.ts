/**
 * Group commit as a graph: the real `groupCommitMachine` with a recording port (its children, the
 * `wait` for a scheduled commit and the `commit` of a group, are created but never started; when a
 * wait is due and how a write ends are events of the graph), and an event generator for what a sink
 * asks (commit now, soon, lazily; close; fail from outside) and what its world does (a wait is due,
 * a group is durable, a write fails).
 */
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { GroupCommitContext, GroupCommitPort } from '../../machines/groupCommit.js';
import { groupCommitMachine } from '../../machines/groupCommit.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';
import { deferred, type Deferred } from './world.js';

/** Group commit has no configuration: every sink asks the same machine. */
export type GroupCommitConfig = Record<string, never>;
const dims: Dimensions<GroupCommitConfig> = {};

/** The `seq` a written group ends at, in the graph. */
export const GROUP_SEQ = 7;

/** What the port was asked to do, one line each (see `groupCommit.scenario.ts`). */
export interface GroupCommitWorld {
  readonly effects: string[];
  /** The group being written: the scenario settles it. */
  write?: Deferred<number>;
  /** The scheduled commit's wait: the scenario makes it due. */
  due?: () => void;
}

export function recordingPort(world: GroupCommitWorld = { effects: [] }): GroupCommitPort {
  const { effects } = world;
  return {
    commit() {
      effects.push('write a group');
      world.write = deferred<number>();
      return world.write.promise;
    },
    committed: (seq) => effects.push(`durable up to ${seq}`),
    wait(when, due) {
      effects.push(`wait ${when}`);
      let fired = false;
      world.due = () => {
        fired = true;
        due();
      };
      // A wait stopped before it was due is a cancelled timer: the world sees that.
      return () => {
        if (!fired) effects.push(`stop waiting ${when}`);
      };
    },
    failed: (error) => effects.push(`failed: ${error instanceof Error ? error.message : String(error)}`),
  };
}

export function groupCommitEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  const asks: AnyEventObject[] = [{ type: 'COMMIT' }, { type: 'SOON' }, { type: 'LAZY' }, { type: 'CLOSE' }, { type: 'FAIL', error: new Error('lease lost') }];
  let events: AnyEventObject[] = [];
  if (s.matches('idle')) events = asks;
  else if (s.matches('scheduled')) events = [{ type: 'DUE' }, ...asks];
  else if (s.matches('committing')) events = [{ type: 'xstate.done.actor.commit', output: GROUP_SEQ }, { type: 'xstate.error.actor.commit', error: new Error('disk full') }, ...asks];
  return events.filter((e) => getNextTransitions(s).some((t) => t.eventType === e.type));
}

export function serializeGroupCommit(s: AnyMachineSnapshot): string {
  const c = s.context as GroupCommitContext;
  if (s.matches('scheduled')) return `scheduled ${c.due}`;
  if (s.matches('committing')) return `committing next=${c.next}${c.closing ? ' closing' : ''}`;
  return JSON.stringify(s.value);
}

export function describeGroupCommitEvent(e: AnyEventObject): string {
  if (e.type === 'xstate.done.actor.commit') return 'durable';
  if (e.type === 'xstate.error.actor.commit') return 'write failed';
  return e.type;
}

export const groupCommitGraph: GraphModel<GroupCommitConfig> = {
  machine: groupCommitMachine,
  input: () => ({ port: recordingPort() }),
  events: (s) => groupCommitEvents(s),
  serialize: serializeGroupCommit,
  describe: describeGroupCommitEvent,
};

let cached: Plan<GroupCommitConfig> | undefined;

/** Shortest paths of group commit to every state and through every edge. */
export function planGroupCommitPaths(): Plan<GroupCommitConfig> {
  cached ??= planPaths(groupCommitGraph, enumerateConfigs(dims, (c) => exploreGraph(groupCommitGraph, c)), { simplePathsFor: () => false });
  return cached;
}
