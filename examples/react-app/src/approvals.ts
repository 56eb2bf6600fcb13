/**
 * The page's `ApprovalService`: a question the runtime asks is kept in a small store the UI
 * subscribes to (`useSyncExternalStore`), and the runtime's promise resolves when a button is
 * clicked. A question withdrawn by the runtime (its call was cancelled, or the approval timed
 * out) leaves the store without an answer.
 */
import type { ApprovalService } from 'dsh';

export type ApprovalAnswer = 'allowed-once' | 'allowed-always' | 'denied';

export interface PendingApproval {
  readonly callId: string;
  readonly toolName: string;
  readonly args: unknown;
  readonly reason: string | undefined;
  answer(answer: ApprovalAnswer): void;
}

export interface ApprovalStore extends ApprovalService {
  /** The questions waiting for an answer, oldest first (a new array on every change). */
  pending(): readonly PendingApproval[];
  subscribe(listener: () => void): () => void;
}

export function createApprovalStore(): ApprovalStore {
  let pending: readonly PendingApproval[] = [];
  const listeners = new Set<() => void>();
  const set = (next: readonly PendingApproval[]) => {
    pending = next;
    for (const l of listeners) l();
  };
  return {
    pending: () => pending,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    request(req, signal) {
      return new Promise<ApprovalAnswer>((resolve, reject) => {
        const remove = () => set(pending.filter((p) => p !== entry));
        const entry: PendingApproval = {
          callId: req.callId,
          toolName: req.toolName,
          args: req.args,
          reason: req.reason,
          answer(answer) {
            signal.removeEventListener('abort', onAbort);
            remove();
            resolve(answer);
          },
        };
        const onAbort = () => {
          remove();
          reject(signal.reason);
        };
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        set([...pending, entry]);
      });
    },
  };
}
