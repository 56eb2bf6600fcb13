/**
 * Who waits for which `seq` to be durable, for a sink with group commit (the JSONL file, the
 * session store): each waiter resolves once a commit reaches its `seq`, and all reject together when
 * the sink fails. Browser-safe.
 */
export interface DurabilityWaiters {
  /** Resolves once `settle` reaches `seq`; rejects with the sink's failure. */
  add(seq: number): Promise<void>;
  /** Everything up to `durableSeq` is durable: those waiters resolve. */
  settle(durableSeq: number): void;
  /** The sink failed: every waiter rejects with `error`. */
  reject(error: Error): void;
}

export function durabilityWaiters(): DurabilityWaiters {
  const waiters: Array<{ seq: number; resolve: () => void; reject: (e: Error) => void }> = [];
  return {
    add: (seq) => new Promise<void>((resolve, reject) => void waiters.push({ seq, resolve, reject })),
    settle(durableSeq) {
      for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!.seq <= durableSeq) waiters.splice(i, 1)[0]!.resolve();
    },
    reject(error) {
      for (const w of waiters.splice(0)) w.reject(error);
    },
  };
}
