/**
 * `dsh run --inspect`: the inspector page on a running session. The page follows the session's
 * log and the turns' inspection events (live actor states) and answers its questions through the
 * same approval service the terminal uses (pageApprovals.ts).
 */
import type { RunInspectorHooks } from '../run/runSession.js';
import { liveFeed } from './feed.js';
import { pageApprovals, type PageApprovals } from './pageApprovals.js';
import { startInspector } from './server.js';

export interface RunInspector {
  readonly url: string;
  readonly hooks: RunInspectorHooks;
  /** The run ended: the page stops following (it keeps showing the session). */
  end(): void;
  close(): Promise<void>;
}

export async function startRunInspector(title: string): Promise<RunInspector> {
  const feed = liveFeed(title);
  let approvals: PageApprovals | undefined;
  const server = await startInspector({ feed, approvals: { answer: (callId, answer) => approvals?.answer(callId, answer) ?? false } });
  return {
    url: server.url,
    hooks: {
      approval(terminal) {
        approvals = pageApprovals(terminal);
        approvals.onChange((pending) => feed.setPending(pending));
        return approvals.service;
      },
      attach: (log) => void feed.attachLog(log),
      inspect: (ev) => feed.inspect(ev),
      stage: (ev) => feed.stage(ev),
    },
    end: () => feed.end(),
    close: () => server.close(),
  };
}
