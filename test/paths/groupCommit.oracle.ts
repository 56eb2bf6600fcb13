/**
 * What a sink with group commit must do, given what was asked and what the disk did along a path:
 * written from the sinks' contract (src/adapters/log/jsonlSink.ts, src/runtime/store/storeSink.ts,
 * docs/sessions.md) and SPEC §9.1 (an event is durable before a tool body it announces runs), never
 * from `machines/groupCommit.ts`:
 * - a commit point, a flush or a full buffer writes a group at once, unless one is being written:
 *   then the next group goes out as soon as that one is durable;
 * - `whenDurable` writes on the next turn of the event loop (one group for a burst of asks);
 * - an event that is no commit point is written within the lazy delay; an ask for sooner wins;
 * - a group is durable once written: the sink's waiters are told, in order;
 * - a failed write fails the sink for good (told once), and so does a failure from outside;
 * - a closed sink writes nothing more, but a group being written finishes first.
 */
import type { AnyEventObject } from 'xstate';

export interface GroupCommitVerdict {
  readonly effects: readonly string[];
  /** `failed`, `closed`, or where the sink is when the path ends. */
  readonly end: string;
  readonly problems: readonly string[];
}

export function judgeGroupCommit(events: readonly AnyEventObject[]): GroupCommitVerdict {
  const effects: string[] = [];
  const problems: string[] = [];
  let phase = 'idle' as 'idle' | 'scheduled' | 'writing' | 'failed' | 'closed';
  let due: 'soon' | 'lazy' = 'lazy';
  let after: 'nothing' | 'lazy' | 'write' = 'nothing';
  let closing = false;
  const write = () => {
    phase = 'writing';
    after = 'nothing';
    effects.push('write a group');
  };
  const schedule = (when: 'soon' | 'lazy') => {
    phase = 'scheduled';
    due = when;
    effects.push(`wait ${when}`);
  };
  const unschedule = () => {
    if (phase === 'scheduled') effects.push(`stop waiting ${due}`);
  };
  for (const e of events) {
    if (phase === 'failed' || phase === 'closed') {
      problems.push(`the sink is ${phase}, but the path goes on with ${e.type}`);
      break;
    }
    switch (e.type) {
      case 'COMMIT':
        if (phase === 'writing') after = 'write';
        else {
          unschedule();
          write();
        }
        break;
      case 'SOON':
        if (phase === 'writing') after = 'write';
        else if (phase === 'idle') schedule('soon');
        else if (due === 'lazy') {
          unschedule();
          schedule('soon');
        }
        break;
      case 'LAZY':
        if (phase === 'writing') after = after === 'write' ? 'write' : 'lazy';
        else if (phase === 'idle') schedule('lazy');
        break;
      case 'DUE':
        if (phase !== 'scheduled') problems.push('a wait is due with nothing scheduled');
        write();
        break;
      case 'xstate.done.actor.commit':
        if (phase !== 'writing') problems.push('a group is durable with none being written');
        effects.push(`durable up to ${String(e.output)}`);
        if (closing) phase = 'closed';
        else if (after === 'write') write();
        else if (after === 'lazy') schedule('lazy');
        else phase = 'idle';
        break;
      case 'xstate.error.actor.commit':
        if (phase !== 'writing') problems.push('a write fails with none being written');
        effects.push(`failed: ${(e.error as Error).message}`);
        phase = 'failed';
        break;
      case 'CLOSE':
        if (phase === 'writing') closing = true;
        else {
          unschedule();
          phase = 'closed';
        }
        break;
      case 'FAIL':
        // The sink is told at once; a scheduled wait is then stopped.
        effects.push(`failed: ${(e.error as Error).message}`);
        unschedule();
        phase = 'failed';
        break;
      default:
        problems.push(`the SPEC oracle does not know what ${e.type} means for group commit: teach it in groupCommit.oracle.ts`);
    }
  }
  if (phase !== 'failed' && phase !== 'closed') problems.push(`the path ends with the sink ${phase}, neither closed nor failed`);
  return { effects, end: phase, problems };
}
