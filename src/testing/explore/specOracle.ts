/**
 * dsh's SPEC, as checks of one run: what must hold in every session whatever the agent does, read
 * from the session's events and from what its bodies did. Written from SPEC.md, never from the
 * machines: a machine that says the wrong thing fails here. Pure.
 */
import { ErrorCode, type LogEvent, type LogEventOf } from '../../protocol/index.js';
import { INJECTED_BY_EXPLORE, type ExploredRun } from './world.js';

/** One rule a run broke, and how. */
export interface SpecViolation {
  /** The rule, as SPEC states it (`SPEC §3: results are committed in the model's order`). */
  readonly rule: string;
  readonly message: string;
}

/** The rules, by name: each is checked on every run. */
export const SPEC_RULES = {
  pairs: 'SPEC §3: every tool/call has exactly one tool/result',
  order: "SPEC §3: results are committed in the model's order",
  deny: 'SPEC §2: a deny is never undone (no body runs, the result is an error)',
  frozen: 'SPEC §2: a body gets frozen arguments',
  signal: 'SPEC §5: a body honours its signal (it has settled when its call ends ABORTED or TIMEOUT)',
  once: 'SPEC §8: no call runs its body twice, across a crash and resume included',
  ends: 'SPEC §1: every step and turn that starts ends',
  finalize: 'SPEC §2: finalizeContent is called exactly once per result the body produced',
  listeners: 'SPEC §5: no listener fails (a listener that throws fails its call closed, HOOK_FAILED)',
  settles: 'the turn settles (it never waits on nothing)',
} as const;

const DENY_CODES: ReadonlySet<string> = new Set([ErrorCode.POLICY_DENIED, ErrorCode.APPROVAL_DENIED, ErrorCode.GUARD_DENIED]);
const DENY_ANSWERS: ReadonlySet<string> = new Set(['denied', 'timeout', 'cancelled']);

/**
 * Every rule of `SPEC_RULES` the run broke (empty: it kept them all). Without `result` (a session
 * still running, or one judged from its log alone) the rules about how a run ends are not checked;
 * with no `bodies`, only what the log shows is.
 */
export function judgeBySpec(run: Pick<ExploredRun, 'events' | 'bodies' | 'result' | 'stuck'> & Partial<Pick<ExploredRun, 'finalized'>>): SpecViolation[] {
  const out: SpecViolation[] = [];
  const broke = (rule: keyof typeof SPEC_RULES, message: string) => out.push({ rule: SPEC_RULES[rule], message });
  if (run.stuck) broke('settles', run.stuck);
  const calls = new Map<number, LogEventOf<'tool/call'>>();
  const results = new Map<number, LogEventOf<'tool/result'>[]>();
  const answers: LogEventOf<'tool/approval-answer'>[] = [];
  const open = new Map<string, LogEvent>();
  for (const e of run.events) {
    if (e.type === 'tool/call') calls.set(e.seq, e);
    else if (e.type === 'tool/result') for (const s of e.sourceEventSeqs) results.set(s, [...(results.get(s) ?? []), e]);
    else if (e.type === 'tool/approval-answer') answers.push(e);
    else if (e.type === 'hook/failed' && e.failed === 'closed' && !e.message.includes(INJECTED_BY_EXPLORE)) broke('listeners', `listener "${e.listener}" on ${e.hook} failed for ${e.callId}: ${e.message}`);
    if (e.type === 'turn/start') open.set(`turn ${e.turnId}`, e);
    else if (e.type === 'turn/end') open.delete(`turn ${e.turnId}`);
    else if (e.type === 'step/start') open.set(`step ${e.turnId}#${e.stepIndex}`, e);
    else if (e.type === 'step/end') open.delete(`step ${e.turnId}#${e.stepIndex}`);
  }
  // A turn suspended at the end of the run waits, with its calls, for an answer: not broken.
  const suspended = run.result?.outcome === 'suspended' ? run.result.turnId : undefined;
  const settledRun = !run.stuck && run.result !== undefined;

  if (settledRun) {
    for (const [key, e] of open) {
      if ('turnId' in e && e.turnId === suspended) continue;
      broke('ends', `${key} (event #${e.seq}) has no end`);
    }
  }
  for (const [seq, call] of calls) {
    const rs = results.get(seq) ?? [];
    if (rs.length > 1) broke('pairs', `${call.callId} (tool/call #${seq}) has ${rs.length} results (#${rs.map((r) => r.seq).join(', #')})`);
    if (rs.length === 0 && settledRun && call.turnId !== suspended) broke('pairs', `${call.callId} (tool/call #${seq}) has no result`);
  }
  for (const [seq, rs] of results) if (!calls.has(seq)) broke('pairs', `tool/result #${rs[0]!.seq} answers #${seq}, which is no tool/call`);

  // Commit order, per step: each result's call index above the one before it.
  const lastIndex = new Map<string, { index: number; callId: string }>();
  for (const e of run.events) {
    if (e.type !== 'tool/result') continue;
    const call = calls.get(e.sourceEventSeqs[0]!);
    if (!call) continue;
    const step = `${call.turnId}#${call.stepIndex}`;
    const before = lastIndex.get(step);
    if (before && call.index < before.index) broke('order', `${call.callId} (index ${call.index}) was committed after ${before.callId} (index ${before.index}) in step ${step}`);
    lastIndex.set(step, { index: call.index, callId: call.callId });
  }

  for (const [seq, call] of calls) {
    const result = results.get(seq)?.[0];
    const answer = answers.find((a) => a.callId === call.callId && a.seq > seq && (!result || a.seq < result.seq));
    const deniedBy = answer && DENY_ANSWERS.has(answer.answer) ? `the approval answer "${answer.answer}"` : result?.result.error && DENY_CODES.has(result.result.error.code) ? result.result.error.code : undefined;
    if (!deniedBy) continue;
    if (result && !result.result.isError) broke('deny', `${call.callId} was denied (${deniedBy}) yet its result is a success`);
    if (run.bodies.some((b) => b.callSeq === seq)) broke('deny', `${call.callId} was denied (${deniedBy}) yet its body ran`);
  }

  const started = new Map<string, number>();
  for (const b of run.bodies) {
    if (!b.argsFrozen) broke('frozen', `${b.callId} (${b.toolName}) got arguments that are not frozen`);
    const key = `${b.callSeq}/${b.attempt}`;
    started.set(key, (started.get(key) ?? 0) + 1);
    if (started.get(key) === 2) broke('once', `the body of ${b.callId} (tool/call #${b.callSeq}) ran twice${b.process > 1 ? ' (again after a restart)' : ''}`);
    const result = results.get(b.callSeq)?.[0];
    const code = result?.result.error?.code;
    if (b.ran && result && (code === ErrorCode.ABORTED || code === ErrorCode.TIMEOUT) && (b.settledAtSeq === undefined || b.settledAtSeq >= result.seq)) {
      broke('signal', `${b.callId} (${b.toolName}) ended ${code} (event #${result.seq}) while its body ${b.settledAtSeq === undefined ? 'never settled' : `went on until after event #${b.settledAtSeq}`}`);
    }
  }
  // finalizeContent: at least once per successful result of the tool, at most once per value a body produced.
  for (const [tool, n] of Object.entries(run.finalized ?? {})) {
    let ok = 0;
    for (const rs of results.values()) if (rs[0]!.toolName === tool && !rs[0]!.result.isError) ok++;
    const values = run.bodies.filter((b) => b.toolName === tool && b.outcome?.ok === true).length;
    if (n < ok || n > values) broke('finalize', `${tool}'s finalizeContent was called ${n} time(s) for ${ok} successful result(s) from ${values} value(s) its bodies produced`);
  }
  return out;
}
