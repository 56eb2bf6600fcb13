/** The session log as readable text, one line per event: a pure projection for terminals and docs. */
import { describeProvenance } from './describeProvenance.js';
import type { LogEvent } from './index.js';

/** Options of `formatLog`. */
export interface LogTextOptions {
  /** Full texts (messages, model text, results, inputs), not cut to a preview. Default false. */
  full?: boolean;
}

// A view never throws: a value JSON cannot carry (cyclic, nested too deep) is shown as a marker.
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '[unprintable arguments]';
  }
}

/** One line describing an event (without its seq). */
export function describeEvent(e: LogEvent, options: LogTextOptions = {}): string {
  // In full mode nothing is cut; newlines are shown as \\n (quoted texts: JSON escapes), so an event stays one line.
  const clip = (s: string, max = 100) => {
    if (options.full) return s.replace(/\r?\n/g, '\\n');
    const one = s.replace(/\s+/g, ' ').trim();
    return one.length > max ? `${one.slice(0, max - 1)}…` : one;
  };
  const quoted = (s: string, max: number) => JSON.stringify(options.full ? s : clip(s, max));
  const inputText = (input: unknown) => clip(typeof input === 'string' ? input : safeJson(input), 60);
  switch (e.type) {
    case 'turn/start':
      return `turn/start ${e.turnId}${e.followUp ? ` (${e.followUp.kind} after ${e.followUp.after})` : ''}: ${clip(e.input)}`;
    case 'step/start':
      return `  step/start #${e.stepIndex}`;
    case 'llm/stream':
      return `    llm/stream (${e.kind}) ${quoted(e.text, 80)}`;
    case 'tool/call':
      return `    tool/call ${e.callId} ${e.toolName}(${inputText(e.input)}) [${e.executionMode}]`;
    case 'tool/result': {
      const r = e.result;
      const status = r.isError ? `✗ ${r.error?.code}` : '✓';
      const decided = r.decision ? ` · ${describeProvenance(r.decision)}` : '';
      return `    tool/result ${e.callId} ${status} ${quoted(r.content, 80)} ← #${e.sourceEventSeqs.join(',')}${decided}`;
    }
    case 'step/end':
      return `  step/end #${e.stepIndex} (${e.finishReason}, ${e.toolCalls} tool call${e.toolCalls === 1 ? '' : 's'})`;
    case 'turn/end':
      return `turn/end ${e.turnId}: ${e.outcome} after ${e.steps} step${e.steps === 1 ? '' : 's'}${e.error ? ` (${e.error})` : ''}`;
    case 'agent/request-error':
      return `  agent/request-error attempt ${e.attempt}: ${e.kind}${e.status ? ` ${e.status}` : ''} → ${e.action}${e.delayMs !== undefined ? ` in ${e.delayMs} ms` : ''}: ${clip(e.message, 60)}`;
    case 'context/compacted':
      return e.foldedTurnIds?.length
        ? `  context/compacted (${e.strategy}): ${e.foldedTurnIds.length} turn(s) folded into a summary, ${e.beforeChars} → ${e.afterChars} chars`
        : `  context/compacted (${e.strategy}): ${e.stubbedSeqs.length} result(s) stubbed, ${e.beforeChars} → ${e.afterChars} chars`;
    case 'tool/approval-request':
      return `    tool/approval-request ${e.callId} ${e.toolName}${e.reason ? `: ${clip(e.reason, 60)}` : ''}${e.preview ? ` [${e.preview.kind}: ${e.preview.text.split('\n').length} line(s)${e.preview.truncated ? ', cut' : ''}]` : ''}`;
    case 'tool/approval-answer':
      return `    tool/approval-answer ${e.callId}: ${e.answer}${e.reason ? ` (${quoted(e.reason, 60)})` : ''}`;
    case 'hook/failed':
      return `    hook/failed ${e.callId} ${e.hook} "${e.listener}" (failed ${e.failed}): ${clip(e.message, 60)}`;
    case 'warning':
      return `    warning ${e.code}${e.callId ? ` ${e.callId}` : ''}: ${clip(e.message, 80)}`;
    case 'tool/spilled':
      return `    tool/spilled ${e.callId}: ${e.bytes} bytes, ${e.lines} lines → ${e.locator}`;
    case 'tool/progress': {
      const status = [e.progress !== undefined ? `${e.progress}${e.total !== undefined ? `/${e.total}` : ''}` : '', e.message !== undefined ? clip(e.message, 60) : '']
        .filter(Boolean)
        .join(' ');
      const out = e.output !== undefined ? ` ${quoted(e.output, 60)}${e.droppedChars ? ` (+${e.droppedChars} chars before)` : ''}` : '';
      return `    tool/progress ${e.callId}${status ? ` ${status}` : ''}${out}`;
    }
    case 'user/steer':
      return `  user/steer #${e.stepIndex}: ${quoted(e.text, 80)}`;
    case 'turn/suspended':
      return `turn/suspended ${e.turnId} at step #${e.stepIndex}: waiting for approval of ${e.calls.map((c) => c.callId).join(', ')}`;
    case 'session/checkpoint':
      return `session/checkpoint (state of events 1–${e.seq - 1})`;
    case 'session/model': {
      const m = (x: { spec: string; baseUrl?: string }) => `${x.spec}${x.baseUrl ? ` at ${x.baseUrl}` : ''}`;
      return `session/model ${m(e.model)}${e.previous ? ` (was ${m(e.previous)})` : ''}`;
    }
  }
}

/** `seq` padded, then the event's line. */
export function formatEvent(e: LogEvent, options: LogTextOptions = {}): string {
  return `${String(e.seq).padStart(4)} ${describeEvent(e, options)}`;
}

/** The session log as text, one line per event (what `dsh log` prints); never throws. */
export function formatLog(events: readonly LogEvent[], options: LogTextOptions = {}): string {
  return events.map((e) => formatEvent(e, options)).join('\n');
}
