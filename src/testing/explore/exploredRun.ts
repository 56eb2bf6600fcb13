/**
 * One explored run: the user's agent, built fresh on a world `explore` plays (a log that may crash
 * at any append, a clock that only moves when told, an approval service that answers as told), is
 * driven through one path. Wherever the agent waits on the world (a question asked, bodies ready to
 * run, a log append), the run's `Chooser` picks what happens: an approval answer, which body
 * finishes next and how (as it does, failing, after its deadline, or cancelled while it runs), a
 * cancel of the turn, or a crash. A crash (or a suspended turn) ends the process: the next one is
 * built on what was durable, closes what was left open exactly as `dsh resume` does, and goes on
 * (`resumeTurn` for a suspended turn, a new turn otherwise). Node-free, but it drives real async
 * code: bodies and listeners may do real I/O; waits on time should use the clock they are given.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { isFrozenDeep } from './frozen.js';
import type { LogEvent } from '../../protocol/index.js';
import { ManualClock } from '../../runtime/clock.js';
import type { AnyTool, ExecContext } from '../../runtime/defineTool.js';
import { createMemoryLog } from '../../runtime/log/sessionLog.js';
import { closeOpenWork } from '../../runtime/openWork.js';
import { SUSPEND, type ApprovalRequest, type ApprovalService } from '../../runtime/pipeline/approvalService.js';
import type { ApprovalAnswer, ApprovalDenial } from '../../protocol/index.js';
import type { CallStageEvent } from '../../runtime/inspection/stageEvents.js';
import { RESUME_REASON } from '../../runtime/store/sessionTurns.js';
import type { TurnHandle, TurnOptions, TurnResult } from '../../runtime/turn/types.js';
import type { ChoiceRecord, Chooser } from './choices.js';
import type { Recorder } from '../paths/observe.js';
import { INJECTED_BY_EXPLORE, type BodyRecord, type ExploredRun, type ExploredTurn, type ExploreWorld, type RuntimeFactory } from './world.js';
import type { ListenerWrapper } from '../../runtime/hooks.js';

/** What can vary in a run (see `ExploreOptions`). */
export interface RunSettings {
  readonly runtime: RuntimeFactory;
  readonly turn: ExploredTurn;
  /** The message of the turn a process starts after a crash (default `continue`); false: none. */
  readonly resumeInput: string | false;
  readonly approvals: boolean;
  readonly bodies: boolean;
  readonly cancels: boolean;
  readonly crashes: boolean;
  /** Make each listener and guard fail (throw) on some path. */
  readonly listeners: boolean;
  /** Processes a run may take (a crash or a suspension each start one). */
  readonly maxProcesses: number;
  /** Choice points a run may take before it is cut. */
  readonly maxChoices: number;
  /** Real milliseconds a body or listener may work (on real I/O) before the run is called stuck. */
  readonly patienceMs: number;
}

/** Every stage event of a call, for the oracle: how its policy stages decided. */
export interface CallDecisions {
  readonly process: number;
  readonly turnId?: string;
  readonly callId: string;
  readonly toolName: string;
  readonly outcomes: Array<{ stage: string; kind: string; code?: string }>;
}

/** A run, with what only the oracle and the coverage need besides the user's view of it. */
export interface RunRecord extends ExploredRun {
  readonly decisions: readonly CallDecisions[];
  /** The choices made, replayable. */
  readonly path: readonly number[];
  /** Each choice point met, with its options. */
  readonly made: readonly ChoiceRecord[];
  /** The run hit `maxChoices`. */
  readonly cut: boolean;
}

const fresh = (turn: ExploredTurn): TurnOptions => {
  const options = typeof turn === 'function' ? turn() : turn;
  const model = options.model as LanguageModelV3 & { restart?: () => LanguageModelV3 };
  return typeof model.restart === 'function' ? { ...options, model: model.restart() } : options;
};

const APPROVAL_ANSWERS = ['approved once', 'approved always', 'denied', 'timed out', 'suspended'] as const;
const BODY_MODES = ['run', 'fail', 'slow', 'cancel'] as const;
const BODY_LABELS: Record<(typeof BODY_MODES)[number], string> = {
  run: 'its body runs',
  fail: 'its body throws',
  slow: 'its body answers after the deadline',
  cancel: 'the turn is cancelled while its body runs',
};

interface AskedApproval {
  readonly request: ApprovalRequest;
  readonly answer: (a: ApprovalAnswer | ApprovalDenial | typeof SUSPEND) => void;
}

type BodyMode = (typeof BODY_MODES)[number];

interface HeldBody {
  readonly record: BodyRecord;
  readonly index: number;
  /** Lets the body go on as `mode` says; a `slow` body's answer then waits for `deliver`. */
  readonly release: (mode: BodyMode) => void;
  deliver: () => void;
}

/** A clock that counts the timers one body has set and not yet seen fire: a body waiting on time is not working. */
function trackedClock(clock: ManualClock): { clock: ExecContext['clock']; waiting: () => boolean } {
  const mine = new Set<unknown>();
  return {
    waiting: () => mine.size > 0,
    clock: {
      now: () => clock.now(),
      setTimeout: (fn, ms) => {
        const handle: unknown = clock.setTimeout((...a: unknown[]) => {
          mine.delete(handle);
          fn(...a);
        }, ms);
        mine.add(handle);
        return handle;
      },
      clearTimeout: (handle) => {
        mine.delete(handle);
        clock.clearTimeout(handle);
      },
    },
  };
}

/** Runs one path. */
export async function exploreRun(settings: RunSettings, chooser: Chooser, recorder: Recorder, onTools: (names: readonly string[]) => void, index: number): Promise<RunRecord> {
  const durable: LogEvent[] = [];
  const lost: number[] = [];
  const bodies: BodyRecord[] = [];
  const finalized: Record<string, number> = {};
  const decisions: CallDecisions[] = [];
  const steps: string[] = [];
  let result: TurnResult | undefined;
  let stuck: string | undefined;
  let cut = false;
  let processes = 0;
  let crashed = false;
  let startAt = 0;

  for (;;) {
    const p = ++processes;
    const clock = new ManualClock(startAt);
    let dead = false;
    let activity = 0;
    const asked: AskedApproval[] = [];
    const held: HeldBody[] = [];
    /** Bodies started and not settled, each with whether it only waits on the clock. */
    const working = new Set<() => boolean>();
    const mayCrash = settings.crashes && p < settings.maxProcesses && !crashed;
    const log = createMemoryLog({
      clock,
      initial: durable,
      sink: {
        write(event) {
          activity++;
          if (dead) return void lost.push(event.seq);
          if (mayCrash && !cut && !crashed) {
            const at = chooser.choose('append', [{ label: `event #${event.seq} is durable` }, { label: `the process dies before event #${event.seq} (${describe(event)}) is durable` }]);
            if (at === 1) {
              dead = crashed = true;
              lost.push(event.seq);
              steps.push(`the process dies before event #${event.seq} (${describe(event)}) is durable`);
              return;
            }
          }
          durable.push(event);
        },
      },
    });
    const approval: ApprovalService = {
      request: (request, signal) =>
        new Promise((resolve, reject) => {
          activity++;
          if (dead) return; // a dead process is never answered
          const entry: AskedApproval = { request, answer: resolve };
          asked.push(entry);
          signal.addEventListener(
            'abort',
            () => {
              const i = asked.indexOf(entry);
              if (i >= 0) asked.splice(i, 1);
              reject(signal.reason);
            },
            { once: true },
          );
        }),
    };
    // A listener or guard of the user's answers as written, or (a deviation) throws.
    const wrapListener: ListenerWrapper = (hook, name, fn) => {
      if (!settings.listeners || hook === 'tools/execute' || hook === 'tools/result') return fn;
      return ((...args: never[]) => {
        if (!dead && !cut) {
          const call = (hook === 'tools/post-execute' ? args[1] : args[0]) as { callId?: string; toolName?: string } | undefined;
          const who = `${call?.callId} ${call?.toolName}: ${hook === 'tools/guard' ? 'guard' : hook === 'tools/pre-execute' ? 'pre-execute listener' : 'post-execute listener'} "${name}"`;
          if (chooser.choose('listener', [{ label: `${who} answers as written` }, { label: `${who} throws` }]) === 1) {
            steps.push(`${who} throws`);
            throw new Error(`explore: the listener failed (${INJECTED_BY_EXPLORE})`);
          }
        }
        return fn(...args);
      }) as typeof fn;
    };
    const world: ExploreWorld = { log, clock, approval, inspect: recorder.inspect, wrapListener, run: index, process: p };
    const rt = settings.runtime(world);
    if (rt.log !== log || rt.clock !== clock) {
      throw new TypeError('explore: the runtime must be built on the world it is given: createRuntime({ ...world, tools, … })');
    }
    // Every body goes through explore: it runs when the path says, and how.
    const tools = rt.tools.list();
    onTools(tools.map((t) => t.name));
    for (const t of tools) rt.tools.unregister(t.name);
    for (const t of tools) rt.tools.register(heldTool(t));
    const busyStages = new Map<string, string>();
    const offStage = rt.onStage((e: CallStageEvent) => {
      activity++;
      const key = `${e.turnId}/${e.callId}`;
      if (e.type === 'stage/entered') {
        // A listener, guard or post-execute policy of the user's is working.
        if (e.stage === 'preExecute' || e.stage === 'guard' || e.stage === 'postExecute') busyStages.set(key, e.stage);
        return;
      }
      busyStages.delete(key);
      let d = decisions.find((x) => x.process === p && x.turnId === e.turnId && x.callId === e.callId);
      if (!d) decisions.push((d = { process: p, ...(e.turnId !== undefined ? { turnId: e.turnId } : {}), callId: e.callId, toolName: e.toolName, outcomes: [] }));
      d.outcomes.push({ stage: e.stage, kind: e.outcome.kind, ...(e.outcome.code ? { code: e.outcome.code } : {}) });
    });
    const offLog = log.subscribe(() => activity++);

    function heldTool(tool: AnyTool): AnyTool {
      const finalize = tool.finalizeContent;
      return Object.freeze({
        ...tool,
        ...(finalize
          ? {
              finalizeContent: (content: string) => {
                finalized[tool.name] = (finalized[tool.name] ?? 0) + 1;
                return finalize(content);
              },
            }
          : {}),
        execute: (args: unknown, exec: ExecContext) =>
          new Promise((resolve, reject) => {
            activity++;
            if (dead) return; // a dead process starts nothing
            const call = [...log.events()].reverse().find((e) => e.type === 'tool/call' && e.callId === exec.callId);
            const record: BodyRecord = {
              callId: exec.callId,
              toolName: tool.name,
              callSeq: call?.seq ?? 0,
              process: p,
              attempt: exec.attempt,
              args,
              argsFrozen: isFrozenDeep(args),
              mode: 'run',
              ran: false,
            };
            let settled: Promise<unknown> | undefined;
            let released = false;
            const onAbort = () => {
              // Not started: it ends as a body honouring its signal would.
              if (released) return;
              released = true;
              held.splice(held.indexOf(entry), 1);
              reject(exec.signal.reason);
            };
            const entry: HeldBody = {
              record,
              index: call?.type === 'tool/call' ? call.index : 0,
              release(mode) {
                released = true;
                exec.signal.removeEventListener('abort', onAbort);
                held.splice(held.indexOf(entry), 1);
                (record as { mode: BodyMode }).mode = mode;
                bodies.push(record);
                if (mode === 'fail') {
                  record.settledAtSeq = log.lastSeq;
                  record.outcome = { ok: false, error: new Error('explore: the body failed') };
                  return reject(new Error('explore: the body failed (injected by explore)'));
                }
                (record as { ran: boolean }).ran = true;
                const timers = trackedClock(clock);
                working.add(timers.waiting);
                let answer: Promise<unknown>;
                try {
                  answer = Promise.resolve(tool.execute(args, { ...exec, clock: timers.clock }));
                } catch (e) {
                  answer = Promise.reject(e);
                }
                settled = answer.then(
                  (value) => void (record.outcome = { ok: true, value }),
                  (error: unknown) => void (record.outcome = { ok: false, error }),
                );
                void settled.then(() => {
                  record.settledAtSeq = log.lastSeq;
                  working.delete(timers.waiting);
                  activity++;
                  if (mode !== 'slow') answer.then(resolve, reject);
                });
                entry.deliver = () => void settled!.then(() => answer.then(resolve, reject));
              },
              deliver: () => undefined,
            };
            if (exec.signal.aborted) return onAbort();
            exec.signal.addEventListener('abort', onAbort);
            held.push(entry);
          }),
      }) as AnyTool;
    }

    /** Lets the agent run until it waits on the world: nothing new for a few turns of the event loop, and no user code working. */
    async function rest(): Promise<void> {
      const started = Date.now();
      for (let quiet = 0; quiet < 3; ) {
        const before = activity;
        await new Promise((r) => setImmediate(r));
        const busy = busyStages.size > 0 || [...working].some((waitsOnClock) => !waitsOnClock());
        quiet = activity === before && !busy ? quiet + 1 : 0;
        if (busy && Date.now() - started > settings.patienceMs) throw new Error(`a body or listener worked for more than ${settings.patienceMs} ms of real time without settling or waiting on the clock`);
      }
    }

    let handle: TurnHandle | undefined;
    let ended = false;
    try {
      if (p === 1) {
        handle = rt.startTurn(fresh(settings.turn));
        steps.push('the turn starts');
      } else {
        const closed = closeOpenWork(log, RESUME_REASON);
        if (closed.calls + closed.steps + closed.turns > 0) steps.push(`a new process resumes the session: ${closed.calls} open call(s) get INTERRUPTED, ${closed.turns} open turn(s) end`);
        if (rt.pendingSuspension()) {
          handle = rt.resumeTurn(fresh(settings.turn));
          steps.push('a new process resumes the suspended turn');
        } else if (settings.resumeInput !== false) {
          handle = rt.startTurn({ ...fresh(settings.turn), input: settings.resumeInput });
          steps.push(`the session goes on with a new turn: ${JSON.stringify(settings.resumeInput)}`);
        }
      }
      const turn = handle;
      if (turn) {
        void turn.done.then((r) => {
          ended = true;
          result = r;
          activity++;
        });
        while (!ended && !dead) {
          await rest();
          if (ended || dead) break;
          if (chooser.made.length >= settings.maxChoices) {
            cut = true;
            break;
          }
          const options = choicesAt(turn);
          if (options.length === 0) {
            // Nothing to decide: time must pass (a retry's backoff, a deadline, a body's sleep).
            if (clock.pending > 0) {
              await clock.runNext();
              continue;
            }
            stuck = 'the turn waits on nothing explore controls (no question, no body, no timer)';
            break;
          }
          const taken = chooser.choose(asked.length > 0 ? 'approval' : 'body', options);
          steps.push(options[taken]!.label);
          await options[taken]!.act();
        }
      }
      if (!dead && !stuck && !cut) {
        // Late work (a body that ignored its signal, a timer still set) finishes before the run is judged.
        for (let i = 0; i < 1_000 && clock.pending > 0; i++) {
          await rest();
          await clock.runNext();
        }
        await rest();
      }
    } catch (e) {
      stuck = e instanceof Error ? e.message : String(e);
    } finally {
      offStage();
      offLog();
      // The process ends: what the agent opened (an MCP connection, a file) is closed, as on exit.
      await rt.close();
    }

    /** What may happen next where the agent waits: a question answered, a body let go, a cancel. */
    function choicesAt(turn: TurnHandle): Array<{ label: string; act: () => Promise<void> | void }> {
      const options: Array<{ label: string; act: () => Promise<void> | void }> = [];
      const question = asked[0];
      if (question) {
        const { callId, toolName } = question.request;
        const answers = settings.approvals ? APPROVAL_ANSWERS.filter((a) => a !== 'suspended' || p < settings.maxProcesses) : (['approved once'] as const);
        for (const a of answers) {
          options.push({
            label: `${callId} ${toolName}: asked, ${a}`,
            act: async () => {
              if (a === 'timed out') return clock.advance(rt.limits.approvalTimeoutMs);
              asked.shift();
              question.answer(a === 'approved once' ? 'allowed-once' : a === 'approved always' ? 'allowed-always' : a === 'denied' ? { answer: 'denied', reason: 'explore: denied' } : SUSPEND);
            },
          });
        }
      }
      for (const b of [...held].sort((x, y) => x.index - y.index)) {
        for (const mode of settings.bodies ? BODY_MODES : (['run'] as const)) {
          options.push({
            label: `${b.record.callId} ${b.record.toolName}: ${BODY_LABELS[mode]}`,
            act: async () => {
              b.release(mode);
              if (mode === 'cancel') {
                turn.cancel('explore: cancelled while the body ran');
                await rest();
                await clock.advance(rt.limits.abortGraceMs);
              } else if (mode === 'slow') {
                await rest();
                await clock.advance(rt.limits.callTimeoutMs);
                b.deliver();
              }
            },
          });
        }
      }
      if (options.length > 0 && settings.cancels) options.push({ label: 'the turn is cancelled here', act: () => turn.cancel('explore: cancelled') });
      return options;
    }

    startAt = clock.now();
    if (stuck || cut) break;
    if (dead) {
      if (p >= settings.maxProcesses) break;
      continue;
    }
    if (result?.outcome === 'suspended' && p < settings.maxProcesses) {
      steps.push('the turn suspends on its question; the process exits');
      result = undefined;
      continue;
    }
    break;
  }
  return {
    index,
    // The session as a reader finds it afterwards: what each process made durable.
    events: [...durable],
    bodies,
    finalized,
    processes,
    lost,
    ...(result ? { result } : {}),
    ...(stuck ? { stuck } : {}),
    steps,
    decisions,
    path: chooser.path(),
    made: chooser.made,
    cut,
  };
}

function describe(event: LogEvent): string {
  return 'callId' in event && typeof event.callId === 'string' ? `${event.type} ${event.callId}` : event.type;
}
