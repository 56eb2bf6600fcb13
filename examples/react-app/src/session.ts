/**
 * One dsh session in the page: a runtime with in-memory tools, the page's approval inbox, a session
 * view for React, and a log kept in `localStorage`, so a reload (or another tab) picks the session
 * up where it stood: a suspended turn is resumed from its log. The model is scripted (no network):
 * a turn reads three notes in parallel (they finish in reverse: each read waits for the next one),
 * asks to write a summary, then answers with what happened, including any steering message it got.
 */
import { createMemoryLog, createRuntime, forTool, scriptedModel, type ScriptedRequest, type ScriptedStep } from 'dsh';
import { LogEventSchema, type LogEvent } from 'dsh/protocol';
import { createApprovalInbox, createSessionView, type SessionView } from 'dsh/view';
import { createTools, initialFiles } from './tools';

const LOG_KEY = 'dsh-example-log';
const TURN_INPUT = 'summarise the notes';

/** The log kept in localStorage: one JSON event a line, each checked against the schema when read back. */
function storedLog(storage: Storage) {
  let text = storage.getItem(LOG_KEY) ?? '';
  const initial: LogEvent[] = [];
  let dropped = false;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      dropped = true;
      break;
    }
    const event = LogEventSchema.safeParse(parsed);
    if (!event.success || event.data.seq !== initial.length + 1) {
      dropped = true;
      break;
    }
    initial.push(event.data);
  }
  if (dropped) {
    // A log that does not read back is not continued (it stays in storage under another key).
    storage.setItem(`${LOG_KEY}.unreadable`, text);
    initial.length = 0;
    text = '';
    storage.setItem(LOG_KEY, '');
  }
  const log = createMemoryLog({
    initial,
    sink: {
      write(event) {
        text += `${JSON.stringify(event)}\n`;
        storage.setItem(LOG_KEY, text);
      },
    },
  });
  return { log, dropped };
}

export interface Session {
  readonly view: SessionView;
  readonly files: ReadonlyMap<string, string>;
  /** The reads of the latest batch, in the order they finished. */
  finishedReads(): readonly string[];
  /** Hold mode: reads wait for `release(path)` instead of finishing by themselves. */
  setHolding(on: boolean): void;
  isHolding(): boolean;
  /** Finishes a held read. */
  release(path: string): void;
  /** Starts a turn of the scripted model (queued if one is running). */
  runTurn(input?: string): void;
  /** Resumes the session's suspended turn. */
  resume(): void;
  /** Forgets the stored session (the page reloads). */
  reset(): void;
  /** True when the stored log did not read back (it was set aside). */
  readonly droppedLog: boolean;
}

export function createSession(storage: Storage = window.localStorage): Session {
  const files = initialFiles();
  const tools = createTools(files);
  const approvals = createApprovalInbox();
  const { log, dropped } = storedLog(storage);
  const rt = createRuntime({ log, tools: tools.all, approval: approvals });
  rt.hooks.on('tools/pre-execute', 'ask-before-write', forTool(tools.write, () => ({ kind: 'ask', reason: 'changes a file' })));
  const view = createSessionView(rt, { approvals });

  /** The last step: says what happened, from the prompt the model was sent. */
  const answer: ScriptedStep = (request: ScriptedRequest) => ({ text: answerFor(request) });

  return {
    view,
    files,
    finishedReads: tools.finished,
    droppedLog: dropped,
    setHolding: tools.setHolding,
    isHolding: tools.isHolding,
    release: tools.release,
    runTurn(input = TURN_INPUT) {
      tools.reset();
      const model = scriptedModel([
        {
          text: 'Reading the three notes.',
          toolCalls: [
            { toolName: 'read', input: { path: 'notes/plan.md', after: 'notes/todo.md' } },
            { toolName: 'read', input: { path: 'notes/todo.md', after: 'notes/done.md' } },
            { toolName: 'read', input: { path: 'notes/done.md' } },
          ],
        },
        { text: 'Writing the summary.', toolCalls: [{ toolName: 'write', input: { path: 'summary.md', content: '# Summary\n- ship the example\n- the session view\n' } }] },
        answer,
      ]);
      view.startTurn({ model, input });
    },
    resume() {
      // The suspended step is replayed from the log; the model answers the steps after it.
      view.resume({ model: scriptedModel([answer]) });
    },
    reset() {
      storage.removeItem(LOG_KEY);
    },
  };
}

/** The last answer: whether this turn's write was denied and which steering messages it got, as the model was told. */
function answerFor(request: ScriptedRequest): string {
  const { prompt } = request;
  const userText = (m: (typeof prompt)[number]) => (m.role === 'user' ? m.content.map((p) => (p.type === 'text' ? p.text : '')).join('') : undefined);
  // This turn is what follows its request (the last user message with the turn's input); the user
  // messages after it are the steers, the tool messages its results.
  const start = prompt.map(userText).lastIndexOf(TURN_INPUT);
  const turn = prompt.slice(start + 1);
  const steers = turn.map(userText).filter((t): t is string => t !== undefined && t !== '');
  const denied = JSON.stringify(turn).includes('APPROVAL_DENIED');
  const head = denied ? 'Done, but the write was denied.' : 'Done: read the notes and wrote summary.md.';
  return steers.length ? `${head} You also said: ${steers.join(' / ')}` : head;
}
