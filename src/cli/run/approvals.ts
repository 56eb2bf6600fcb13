/**
 * Who answers an `ask` in `dsh run`: on a terminal, one keystroke (y allow once, a allow always,
 * n deny); without one, nobody: the call is denied, with a line that says how to pre-approve.
 */
import type { ApprovalAnswer } from '../../protocol/index.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import { argsText, type PendingApproval } from '../view/runView.js';

/** Denies every question, saying how to pre-approve (`--allow TOOL`). */
export function deniedWithoutTerminal(err: (line: string) => void): ApprovalService {
  return {
    request: async (req) => {
      err(`dsh: denied ${req.toolName} ${argsText(req.args)} (${req.callId}): no terminal to ask; pre-approve with --allow ${req.toolName}`);
      return 'denied';
    },
  };
}

export interface KeystrokeApprovalOptions {
  input: NodeJS.ReadStream;
  /** Shows or clears the question (the live view draws it). */
  show: (approval: PendingApproval | undefined) => void;
  /** Ctrl-C pressed while asking (stdin is raw then, so no SIGINT arrives). */
  onInterrupt: () => void;
}

/** Asks on the terminal, one question at a time, one keystroke each. */
export function keystrokeApproval(options: KeystrokeApprovalOptions): ApprovalService {
  let queue: Promise<unknown> = Promise.resolve();
  const ask = (req: { callId: string; toolName: string; args: unknown; reason?: string }, signal: AbortSignal) =>
    new Promise<ApprovalAnswer>((resolve) => {
      if (signal.aborted) return resolve('denied');
      const { input } = options;
      const wasRaw = input.isRaw;
      const done = (answer: ApprovalAnswer) => {
        input.off('data', onData);
        signal.removeEventListener('abort', onAbort);
        if (input.isTTY) input.setRawMode(wasRaw);
        input.pause();
        options.show(undefined);
        resolve(answer);
      };
      const onAbort = () => done('denied');
      const onData = (data: Buffer) => {
        for (const ch of data.toString('utf8')) {
          if (ch === 'y' || ch === 'Y') return done('allowed-once');
          if (ch === 'a' || ch === 'A') return done('allowed-always');
          if (ch === 'n' || ch === 'N' || ch === '\x1b') return done('denied');
          if (ch === '\x03') {
            done('denied');
            return options.onInterrupt();
          }
        }
      };
      options.show({ callId: req.callId, toolName: req.toolName, args: argsText(req.args), ...(req.reason ? { reason: req.reason } : {}) });
      signal.addEventListener('abort', onAbort, { once: true });
      if (input.isTTY) input.setRawMode(true);
      input.on('data', onData);
      input.resume();
    });
  return {
    request(req, signal) {
      const answer = queue.then(() => ask(req, signal));
      queue = answer.catch(() => undefined);
      return answer;
    },
  };
}
