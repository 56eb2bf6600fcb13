/**
 * Approvals answered from the inspector page. Wraps the approval service the terminal uses (the
 * keystroke one on a TTY; none without a terminal, then the page is the only one asked): a
 * question is shown on the page and, when there is one, on the terminal, and the first answer
 * wins. The other asker is then withdrawn through its abort signal (the terminal prompt clears).
 */
import type { ApprovalAnswer, ApprovalDenial, ApprovalPreview } from '../../protocol/index.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import type { SUSPEND } from '../../runtime/pipeline/approvalService.js';
import { argsText } from '../view/runView.js';

export interface PendingQuestion {
  callId: string;
  toolName: string;
  /** The arguments as one short line. */
  args: string;
  reason?: string;
  /** What the call would do: a diff, the command, or the arguments. */
  preview?: ApprovalPreview;
}

type Reply = ApprovalAnswer | ApprovalDenial | typeof SUSPEND;

export interface PageApprovals {
  readonly service: ApprovalService;
  pending(): readonly PendingQuestion[];
  /** Answers a waiting question; false when there is none for `callId` (answered, withdrawn, unknown). */
  answer(callId: string, answer: ApprovalAnswer | ApprovalDenial): boolean;
  /** Called whenever the pending list changes. */
  onChange(listener: (pending: readonly PendingQuestion[]) => void): void;
}

export function pageApprovals(terminal: ApprovalService | undefined): PageApprovals {
  const waiting = new Map<string, { question: PendingQuestion; settle: (a: Reply) => void }>();
  const listeners: Array<(p: readonly PendingQuestion[]) => void> = [];
  const pending = () => [...waiting.values()].map((w) => w.question);
  const changed = () => {
    const p = pending();
    for (const l of listeners) l(p);
  };
  return {
    service: {
      request(req, signal) {
        return new Promise<Reply>((resolve) => {
          if (signal.aborted) return resolve('denied');
          const withdraw = new AbortController();
          let done = false;
          const settle = (a: Reply) => {
            if (done) return;
            done = true;
            waiting.delete(req.callId);
            signal.removeEventListener('abort', onAbort);
            withdraw.abort();
            changed();
            resolve(a);
          };
          const onAbort = () => settle('denied');
          signal.addEventListener('abort', onAbort, { once: true });
          waiting.set(req.callId, { question: { callId: req.callId, toolName: req.toolName, args: argsText(req.args), ...(req.reason ? { reason: req.reason } : {}), ...(req.preview ? { preview: req.preview } : {}) }, settle });
          changed();
          terminal?.request(req, withdraw.signal).then(
            (a) => {
              if (!withdraw.signal.aborted) settle(a);
            },
            () => settle('denied'),
          );
        });
      },
    },
    pending,
    answer(callId, answer) {
      const w = waiting.get(callId);
      if (!w) return false;
      w.settle(answer);
      return true;
    },
    onChange(listener) {
      listeners.push(listener);
    },
  };
}
