/**
 * An approval service for a page: each question the runtime asks waits in the inbox until the page
 * answers it (a button), the runtime withdraws it (the call was cancelled, the approval timed out),
 * or the page answers `suspend` (decide later: the turn suspends, the question stays in the log).
 * Give it to `createRuntime({ approval })` and to `createSessionView(rt, { approvals })`; the view
 * answers through it. Browser-safe.
 */
import type { ApprovalAnswer, ApprovalDenial } from '../protocol/index.js';
import { SUSPEND, type ApprovalService } from '../runtime/pipeline/index.js';

/** A question the runtime is waiting on. */
export interface ApprovalQuestion {
  readonly callId: string;
  readonly toolName: string;
  readonly args: unknown;
  readonly reason?: string;
}

/** How the page answers: allow once or always, deny (with the person's reason), or decide later. */
export type ApprovalReply =
  | { readonly kind: 'allow-once' }
  | { readonly kind: 'allow-always' }
  | { readonly kind: 'deny'; readonly reason?: string }
  | { readonly kind: 'suspend' };

export interface ApprovalInbox extends ApprovalService {
  /** The questions waiting for an answer, oldest first (a new frozen array on every change). */
  questions(): readonly ApprovalQuestion[];
  /** Called after every change of `questions()`; returns the remover. */
  subscribe(listener: () => void): () => void;
  /** Answers the latest open question of call `callId`; false when none is open. */
  answer(callId: string, reply: ApprovalReply): boolean;
}

interface Open {
  readonly question: ApprovalQuestion;
  readonly settle: (answer: ApprovalAnswer | ApprovalDenial | typeof SUSPEND) => void;
}

/** What the runtime is told: a deny's reason goes with it (the pipeline bounds it and hands it to the model). */
const answerOf = (reply: ApprovalReply): ApprovalAnswer | ApprovalDenial | typeof SUSPEND => {
  switch (reply.kind) {
    case 'allow-once':
      return 'allowed-once';
    case 'allow-always':
      return 'allowed-always';
    case 'deny':
      return typeof reply.reason === 'string' && reply.reason.trim() ? { answer: 'denied', reason: reply.reason } : 'denied';
    case 'suspend':
      return SUSPEND;
  }
};

/** A new, empty inbox. */
export function createApprovalInbox(): ApprovalInbox {
  let open: readonly Open[] = [];
  let questions: readonly ApprovalQuestion[] = Object.freeze([]);
  const listeners = new Set<() => void>();
  const set = (next: readonly Open[]) => {
    open = next;
    questions = Object.freeze(next.map((o) => o.question));
    for (const l of [...listeners]) {
      try {
        l();
      } catch {
        // A listener (a UI) cannot break the runtime's question.
      }
    }
  };
  return {
    questions: () => questions,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    answer(callId, reply) {
      for (let i = open.length - 1; i >= 0; i--) {
        const o = open[i]!;
        if (o.question.callId !== callId) continue;
        o.settle(answerOf(reply));
        return true;
      }
      return false;
    },
    request(req, signal) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const question: ApprovalQuestion = Object.freeze({
          callId: req.callId,
          toolName: req.toolName,
          args: req.args,
          ...(req.reason !== undefined ? { reason: req.reason } : {}),
        });
        const leave = () => {
          signal.removeEventListener('abort', onAbort);
          set(open.filter((o) => o !== entry));
        };
        const onAbort = () => {
          leave();
          reject(signal.reason);
        };
        const entry: Open = {
          question,
          settle: (answer) => {
            leave();
            resolve(answer);
          },
        };
        signal.addEventListener('abort', onAbort);
        set([...open, entry]);
      });
    },
  };
}
