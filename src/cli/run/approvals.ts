/**
 * Who answers an `ask` in `dsh run`: on a terminal, one keystroke (y allow once, a allow always,
 * n deny, r deny with a reason typed on the next line); without one, nobody: the call is denied,
 * with a line that says how to pre-approve.
 */
import type { ApprovalAnswer, ApprovalDenial } from '../../protocol/index.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import { MAX_DENIAL_REASON_CHARS } from '../../runtime/pipeline/approvalService.js';
import { argsText, type PendingApproval } from '../view/runView.js';
import { containsControlCharacters } from '../../protocol/visibleText.js';

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
  const ask = (req: Parameters<ApprovalService['request']>[0], signal: AbortSignal) =>
    new Promise<ApprovalAnswer | ApprovalDenial>((resolve) => {
      if (signal.aborted) return resolve('denied');
      const { input } = options;
      const wasRaw = input.isRaw;
      const question = { callId: req.callId, toolName: req.toolName, args: argsText(req.args), ...(req.reason ? { reason: req.reason } : {}), ...(req.preview ? { preview: req.preview } : {}), ...(containsControlCharacters(req.args) ? { controls: true } : {}) };
      // After `r`: the reason being typed (Enter sends it, Esc goes back to the question).
      let typing: string | undefined;
      const done = (answer: ApprovalAnswer | ApprovalDenial) => {
        input.off('data', onData);
        signal.removeEventListener('abort', onAbort);
        if (input.isTTY) input.setRawMode(wasRaw);
        input.pause();
        options.show(undefined);
        resolve(answer);
      };
      const onAbort = () => done('denied');
      const onData = (data: Buffer) => {
        const chars = Array.from(data.toString('utf8'));
        for (let i = 0; i < chars.length; i++) {
          const ch = chars[i]!;
          if (ch === '\x03') {
            done('denied');
            return options.onInterrupt();
          }
          if (typing !== undefined) {
            if (ch === '\r' || ch === '\n') {
              const reason = typing.trim();
              return done(reason ? { answer: 'denied', reason } : 'denied');
            }
            // Esc alone goes back to the question; an escape sequence (an arrow key) is ignored whole,
            // so none of its letters is read as an answer.
            if (ch === '\x1b') {
              if (i + 1 < chars.length) break;
              typing = undefined;
            } else if (ch === '\x7f' || ch === '\b') typing = Array.from(typing).slice(0, -1).join('');
            else if (ch >= ' ' && typing.length < MAX_DENIAL_REASON_CHARS) typing += ch;
            options.show(typing === undefined ? question : { ...question, denyReason: typing });
            continue;
          }
          if (ch === 'r' || ch === 'R') {
            typing = '';
            options.show({ ...question, denyReason: '' });
            continue;
          }
          if (ch === 'y' || ch === 'Y') return done('allowed-once');
          if (ch === 'a' || ch === 'A') return done('allowed-always');
          if (ch === 'n' || ch === 'N' || ch === '\x1b') return done('denied');
        }
      };
      options.show(question);
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
