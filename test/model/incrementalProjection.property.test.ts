/**
 * Issue 16.1: the prompt projection kept as events arrive equals a from-scratch projection of the
 * whole log (the projection as it was before, test/model/projectionOracle.ts), after every append,
 * for random sessions built from valid turns: steps, text and signed/unsigned reasoning, failed
 * attempts, calls in any index order, spilled and duplicate results, calls left open, calls outside
 * turns, compactions (some naming seqs that are not results). The same holds for an index restored
 * from a checkpoint (JSON round trip) and fed the events after it, and for the size compaction
 * measures before it appends its event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent, LogEventOf } from '../../src/protocol/index.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { SessionIndex } from '../../src/runtime/log/sessionIndex.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { promptSize } from '../../src/runtime/projection/promptSize.js';
import type { ProjectPromptOptions } from '../../src/runtime/projection/promptState.js';
import { projectPromptFromScratch } from './projectionOracle.js';

type Command =
  | { k: 'turn'; input: string; closePrevious: boolean }
  | { k: 'step' }
  | { k: 'text'; kind: 'text' | 'reasoning'; text: string; signed: boolean }
  | { k: 'error' }
  | { k: 'call'; index: number; input: unknown }
  | { k: 'spill'; pick: number }
  | { k: 'result'; pick: number; isError: boolean; content: string; withParts: boolean; duplicate: boolean }
  | { k: 'compact'; picks: number[]; bogus: boolean }
  | { k: 'endTurn' }
  | { k: 'loose'; content: string }
  | { k: 'render'; system: boolean; turnPick: number | null; limits: boolean }
  | { k: 'checkpoint' };

const text = fc.string({ maxLength: 40 });
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ k: fc.constant('turn' as const), input: text, closePrevious: fc.boolean() }),
  fc.record({ k: fc.constant('step' as const) }),
  fc.record({ k: fc.constant('text' as const), kind: fc.constantFrom('text' as const, 'reasoning' as const), text, signed: fc.boolean() }),
  fc.record({ k: fc.constant('error' as const) }),
  { weight: 3, arbitrary: fc.record({ k: fc.constant('call' as const), index: fc.nat(5), input: fc.oneof(fc.json(), fc.jsonValue(), fc.constant('{"path":"cut')) }) },
  fc.record({ k: fc.constant('spill' as const), pick: fc.nat() }),
  { weight: 3, arbitrary: fc.record({ k: fc.constant('result' as const), pick: fc.nat(), isError: fc.boolean(), content: fc.string({ maxLength: 200 }), withParts: fc.boolean(), duplicate: fc.boolean() }) },
  fc.record({ k: fc.constant('compact' as const), picks: fc.array(fc.nat(), { maxLength: 6 }), bogus: fc.boolean() }),
  fc.record({ k: fc.constant('endTurn' as const) }),
  fc.record({ k: fc.constant('loose' as const), content: text }),
  { weight: 4, arbitrary: fc.record({ k: fc.constant('render' as const), system: fc.boolean(), turnPick: fc.option(fc.nat()), limits: fc.nat(5).map((n) => n === 0) }) },
  fc.record({ k: fc.constant('checkpoint' as const) }),
);

/** Plays the commands into a log, keeping every turn valid; calls `check` at each render command and at the end. */
function play(commands: Command[], check: (events: readonly LogEvent[], options: ProjectPromptOptions, live: SessionIndex, restored: SessionIndex[]) => void) {
  const log = createMemoryLog({ clock: new ManualClock(1_000) });
  const index = log.index;
  const restored: SessionIndex[] = [];
  log.subscribe((e) => {
    for (const r of restored) r.apply(e);
  });
  const turns: string[] = [];
  let turn: string | undefined;
  let step = -1;
  let stepOpen = false;
  let callNo = 0;
  const pending: LogEventOf<'tool/call'>[] = [];
  const answered: LogEventOf<'tool/call'>[] = [];
  const results: number[] = [];
  const ensureTurn = () => {
    if (turn === undefined) {
      turn = `turn-${turns.length + 1}`;
      turns.push(turn);
      log.append({ type: 'turn/start', turnId: turn, input: `question ${turns.length}` });
      step = -1;
    }
    return turn;
  };
  const ensureStep = () => {
    const t = ensureTurn();
    if (!stepOpen) {
      step++;
      stepOpen = true;
      log.append({ type: 'step/start', turnId: t, stepIndex: step });
    }
    return { turnId: t, stepIndex: step };
  };
  const endStep = () => {
    if (turn !== undefined && stepOpen) log.append({ type: 'step/end', turnId: turn, stepIndex: step, finishReason: 'stop', toolCalls: 0 });
    stepOpen = false;
  };
  const endTurn = () => {
    endStep();
    if (turn !== undefined) log.append({ type: 'turn/end', turnId: turn, outcome: 'completed', steps: step + 1 });
    turn = undefined;
    pending.length = 0;
  };

  for (const c of commands) {
    switch (c.k) {
      case 'turn':
        if (c.closePrevious) endTurn();
        else {
          // Left open (a crashed process); the next turn starts anyway.
          turn = undefined;
          stepOpen = false;
          pending.length = 0;
        }
        turn = `turn-${turns.length + 1}`;
        turns.push(turn);
        log.append({ type: 'turn/start', turnId: turn, input: c.input });
        step = -1;
        break;
      case 'step':
        endStep();
        ensureStep();
        break;
      case 'text': {
        const at = ensureStep();
        log.append({
          type: 'llm/stream',
          ...at,
          kind: c.kind,
          text: c.text,
          ...(c.kind === 'reasoning' && c.signed ? { providerMetadata: { anthropic: { signature: `sig-${c.text.length}` } } } : {}),
        });
        break;
      }
      case 'error': {
        const at = ensureStep();
        log.append({ type: 'agent/request-error', ...at, attempt: 1, kind: 'retryable', message: 'overloaded', action: 'retry', delayMs: 1 });
        break;
      }
      case 'call': {
        const at = ensureStep();
        const id = `c${++callNo}`;
        pending.push(log.append({ type: 'tool/call', ...at, callId: id, toolName: c.index % 2 ? 'read' : 'grep', input: c.input, index: c.index, executionMode: 'parallel' }));
        break;
      }
      case 'spill': {
        const call = pending[c.pick % Math.max(1, pending.length)];
        if (call) log.append({ type: 'tool/spilled', turnId: call.turnId, stepIndex: call.stepIndex, callId: call.callId, locator: `spill:${call.callId}`, bytes: 10, lines: 1 });
        break;
      }
      case 'result': {
        const from = c.duplicate && answered.length ? answered : pending;
        const i = c.pick % Math.max(1, from.length);
        const call = from[i];
        if (!call) break;
        if (from === pending) {
          pending.splice(i, 1);
          answered.push(call);
        }
        const e = log.append({
          type: 'tool/result',
          turnId: call.turnId,
          stepIndex: call.stepIndex,
          callId: call.callId,
          toolName: call.toolName,
          sourceEventSeqs: [call.seq],
          result: {
            callId: call.callId,
            toolName: call.toolName,
            content: c.content,
            metadata: {},
            ...(c.isError ? { isError: true as const, error: { name: 'ToolFailed', code: 'TOOL_FAILED' as const, message: c.content } } : { isError: false as const, value: c.content }),
            ...(c.withParts ? { parts: [{ type: 'image' as const, data: 'aGk=', mediaType: 'image/png' }] } : {}),
          },
        });
        results.push(e.seq);
        break;
      }
      case 'compact': {
        const seqs = c.picks.map((p) => (c.bogus && log.lastSeq > 0 ? 1 + (p % log.lastSeq) : results[p % Math.max(1, results.length)])).filter((s): s is number => s !== undefined);
        if (!seqs.length) break;
        log.append({ type: 'context/compacted', turnId: turn ?? 'turn-0', strategy: 'test', stubbedSeqs: seqs, beforeChars: 0, afterChars: 0 });
        break;
      }
      case 'endTurn':
        endTurn();
        break;
      case 'loose': {
        const call = log.append({ type: 'tool/call', callId: `loose${++callNo}`, toolName: 'read', input: {}, index: 0, executionMode: 'parallel' });
        log.append({
          type: 'tool/result',
          callId: call.callId,
          toolName: 'read',
          sourceEventSeqs: [call.seq],
          result: { callId: call.callId, toolName: 'read', isError: false, content: c.content, value: c.content, metadata: {} },
        });
        break;
      }
      case 'render': {
        const turnId = c.turnPick === null || !turns.length ? undefined : turns[c.turnPick % turns.length];
        check(log.events(), { ...(c.system ? { system: 'sys' } : {}), ...(turnId ? { turnId } : {}), ...(c.limits ? { argLimits: { maxArgsChars: 20, maxArgsDepth: 2 } } : {}) }, index, restored);
        break;
      }
      case 'checkpoint': {
        const cp = log.append(index.toCheckpoint());
        const back = SessionIndex.fromCheckpoint(JSON.parse(JSON.stringify(cp)) as LogEventOf<'session/checkpoint'>);
        expect(back).toBeDefined();
        restored.push(back!);
        break;
      }
    }
  }
  check(log.events(), {}, index, restored);
  return { log, index, results };
}

describe('incremental prompt projection (issue 16.1)', () => {
  it('equals a from-scratch projection after every append, restored from a checkpoint too', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 30, maxLength: 120 }), (commands) => {
        play(commands, (events, options, live, restored) => {
          const want = projectPromptFromScratch(events, options);
          expect(live.prompt.render(options)).toEqual(want);
          // A checkpoint is JSON on disk, so it gives back what JSON can carry (-0 comes back 0):
          // exactly what the model is sent, since the prompt goes over the wire as JSON.
          const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));
          for (const r of restored) expect(asJson(r.prompt.render(options))).toEqual(asJson(want));
        });
      }),
      { numRuns: 150 },
    );
  });

  it('measures the size a compaction would leave before appending it, as a from-scratch projection does after', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 20, maxLength: 60 }), fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), fc.boolean(), (commands, picks, system) => {
        const { log, index, results } = play(commands, () => {});
        if (!results.length) return;
        const seqs = [...new Set(picks.map((p) => results[p % results.length]!))].filter((s) => !index.prompt.isStubbed(s));
        const last = [...log.events()].reverse().find((e) => e.type === 'turn/start');
        const options = { ...(system ? { system: 'sys' } : {}), ...(last?.type === 'turn/start' ? { turnId: last.turnId } : {}) };
        const predicted = index.prompt.sizeIfStubbed(seqs, options);
        expect(index.prompt.size(options)).toBe(promptSize(projectPromptFromScratch(log.events(), options)));
        log.append({ type: 'context/compacted', turnId: 'turn-x', strategy: 'test', stubbedSeqs: seqs, beforeChars: 0, afterChars: 0 });
        expect(predicted).toBe(promptSize(projectPromptFromScratch(log.events(), options)));
        expect(index.prompt.size(options)).toBe(predicted);
      }),
      { numRuns: 200 },
    );
  });
});
