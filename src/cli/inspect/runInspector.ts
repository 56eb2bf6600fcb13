/**
 * `dsh run --inspect`: the inspector page on a running session. The page follows the session's
 * log and its actors' states over the wire protocol, and answers its questions through the page's
 * approval inbox, asked beside the terminal (pageOrTerminal.ts): the first answer wins.
 */
import type { HostedSession } from '../../server/hostedSession.js';
import type { StageListener } from '../../runtime/inspection/stageEvents.js';
import { createApprovalInbox, type ApprovalInbox } from '../../view/approvalInbox.js';
import type { RunInspectorHooks } from '../run/runSession.js';
import { actorStateOf, callStateOfStage } from './actorStates.js';
import { inspectedSession, type InspectedSession } from './inspectedSession.js';
import { pageOrTerminal } from './pageOrTerminal.js';
import { inspectedSessionId, startInspector } from './server.js';

export interface RunInspector {
  readonly url: string;
  readonly hooks: RunInspectorHooks;
  /** The run ended: the page stops following (it keeps showing the session). */
  end(): void;
  close(): Promise<void>;
}

export async function startRunInspector(runId: string): Promise<RunInspector> {
  const sessionId = inspectedSessionId(runId);
  let inbox: ApprovalInbox | undefined;
  let inspected: InspectedSession | undefined;
  let opened!: (s: HostedSession) => void;
  const session = new Promise<HostedSession>((resolve) => (opened = resolve));
  const stageListeners = new Set<StageListener>();
  const server = await startInspector({ sessionId, session, title: runId });
  return {
    url: server.url,
    hooks: {
      approval(terminal) {
        inbox = createApprovalInbox();
        return pageOrTerminal(inbox, terminal);
      },
      attach(log) {
        inspected = inspectedSession({
          id: sessionId,
          log,
          live: true,
          ...(inbox ? { approvals: inbox } : {}),
          onStage(listener) {
            stageListeners.add(listener);
            return () => void stageListeners.delete(listener);
          },
        });
        opened(inspected.session);
      },
      inspect(ev) {
        const a = actorStateOf(ev, Date.now());
        if (a) inspected?.actor(a);
      },
      stage(ev) {
        for (const l of [...stageListeners]) l(ev);
        const a = callStateOfStage(ev, Date.now());
        if (a) inspected?.actor(a);
      },
    },
    end: () => inspected?.end(),
    close: () => server.close(),
  };
}
