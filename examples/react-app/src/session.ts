/**
 * One dsh runtime in the page: in-memory tools and log, the page's approval service, and a
 * scripted model (no network) that plays one turn: a parallel batch of three reads (one of them
 * asks for approval), then a write (asks too), then an answer that says what happened.
 */
import { createRuntime, forTool, scriptedModel, type LogEvent, type ScriptedRequest, type TurnHandle } from 'dsh';
import { createApprovalStore } from './approvals';
import { createTools, initialFiles } from './tools';

export function createSession() {
  const files = initialFiles();
  const tools = createTools(files);
  const approvals = createApprovalStore();
  const rt = createRuntime({ tools: tools.all, approval: approvals });

  rt.hooks.on('tools/pre-execute', 'ask-for-secrets', forTool(tools.read, (call, next) =>
    call.args.path.startsWith('secrets/') ? { kind: 'ask', reason: 'reads a secret' } : next(),
  ));
  rt.hooks.on('tools/pre-execute', 'ask-before-write', forTool(tools.write, () => ({ kind: 'ask', reason: 'changes a file' })));

  /** Starts a turn of the scripted model. */
  function runTurn(input = 'summarise the notes'): TurnHandle {
    const model = scriptedModel([
      {
        text: 'Reading the notes and the token.',
        toolCalls: [
          { toolName: 'read', input: { path: 'notes/plan.md' } },
          { toolName: 'read', input: { path: 'secrets/token' } },
          { toolName: 'read', input: { path: 'notes/todo.md' } },
        ],
      },
      { toolCalls: [{ toolName: 'write', input: { path: 'summary.md', content: '# Summary\n- ship the example\n' } }] },
      (request: ScriptedRequest) => ({ text: answerFor(request) }),
    ]);
    return rt.startTurn({ model, input });
  }

  return { rt, files, approvals, runTurn };
}

export type Session = ReturnType<typeof createSession>;

/** The last answer: which calls of this turn were denied, as the model was told (the results are in its prompt). */
function answerFor(request: ScriptedRequest): string {
  // The prompt holds the whole session: this turn is what follows its user message, the last one.
  const lastUser = request.prompt.map((m) => m.role).lastIndexOf('user');
  const prompt = JSON.stringify(request.prompt.slice(lastUser));
  const denied = (prompt.match(/APPROVAL_DENIED/g) ?? []).length;
  return denied === 0 ? 'Done: read the notes and wrote summary.md.' : `Done, but ${denied} call(s) were denied.`;
}

/** The log as a React external store: a new array after every append. */
export function logStore(rt: Session['rt']) {
  let events: readonly LogEvent[] = rt.log.events();
  return {
    subscribe(listener: () => void) {
      return rt.log.subscribe(() => {
        events = rt.log.events();
        listener();
      });
    },
    events: () => events,
  };
}
