/**
 * `dsh run --inspect` asks each question in two places: on the page (an approval inbox the wire
 * answers through) and, when there is one, on the terminal (the keystroke prompt). The first answer
 * wins; the other asker is then withdrawn through its abort signal (the terminal prompt clears,
 * the page's question leaves the inbox). A cancelled call (the runtime's signal) withdraws both
 * and is denied.
 */
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import type { ApprovalInbox } from '../../view/approvalInbox.js';

export function pageOrTerminal(page: ApprovalInbox, terminal: ApprovalService | undefined): ApprovalService {
  return {
    request(req, signal) {
      type Reply = Awaited<ReturnType<ApprovalService['request']>>;
      return new Promise<Reply>((resolve) => {
        if (signal.aborted) return resolve('denied');
        const withdraw = new AbortController();
        let done = false;
        const settle = (a: Reply) => {
          if (done) return;
          done = true;
          signal.removeEventListener('abort', onAbort);
          withdraw.abort();
          resolve(a);
        };
        const onAbort = () => settle('denied');
        signal.addEventListener('abort', onAbort, { once: true });
        // A withdrawn asker's own rejection or late answer is not an answer.
        const ask = (asker: ApprovalService) =>
          asker.request(req, withdraw.signal).then(
            (a) => {
              if (!withdraw.signal.aborted) settle(a);
            },
            () => {
              if (!withdraw.signal.aborted) settle('denied');
            },
          );
        void ask(page);
        if (terminal) void ask(terminal);
      });
    },
  };
}
