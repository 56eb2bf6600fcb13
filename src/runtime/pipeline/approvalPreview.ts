/**
 * The preview an approval shows (SPEC §10.5): made when stage 1 answers `ask` (and the answer is
 * not remembered), before the machine enters `awaitingApproval`, so its `tool/approval-request`
 * carries it. The tool's own `preview` (a diff for `edit`/`write`, the command for `bash`) when it
 * has one and it answers in time; else the arguments. Always bounded (MAX_PREVIEW_CHARS).
 */
import type { PreExecuteOutcome, PreparedCall, SyncOrAsync } from '../../../machines/callStages.js';
import { describeThrown, type ApprovalPreview } from '../../protocol/index.js';
import { boundedText } from '../views/unifiedDiff.js';
import { isPromise } from './listenerAnswers.js';
import { toolOf } from './prepare.js';
import type { StageDeps } from './stageDeps.js';

/** The most characters of a preview the log records and an approver is shown. */
export const MAX_PREVIEW_CHARS = 8_000;

/** A preview of any shape, cut to the bound. */
export function boundedPreview(preview: ApprovalPreview): ApprovalPreview {
  const { text, truncated } = boundedText(preview.text, MAX_PREVIEW_CHARS);
  return truncated || preview.truncated ? { kind: preview.kind, text, truncated: true } : { kind: preview.kind, text };
}

/** The arguments, as indented JSON. */
export function argsPreview(args: unknown): ApprovalPreview {
  let text: string;
  try {
    text = JSON.stringify(args, null, 2) ?? String(args);
  } catch (e) {
    text = `(the arguments cannot be shown: ${describeThrown(e)})`;
  }
  return boundedPreview({ kind: 'args', text });
}

/**
 * An `ask` outcome with its preview (the stages ask for one only for a question that will be put).
 * A tool preview that throws falls back to the arguments (with why); one that has not answered
 * within `hookTimeoutMs` too.
 */
export function withApprovalPreview(
  deps: Pick<StageDeps, 'clock' | 'limits'>,
  outcome: Extract<PreExecuteOutcome, { kind: 'ask' }>,
  p: PreparedCall,
): SyncOrAsync<PreExecuteOutcome> {
  const tool = toolOf(p);
  if (!tool.preview) return { ...outcome, preview: argsPreview(p.view.args) };
  const fallback = (why: string): PreExecuteOutcome => {
    const args = argsPreview(p.view.args);
    return { ...outcome, preview: boundedPreview({ kind: 'args', text: `${args.text}\n(no preview of the change: ${why})` }) };
  };
  const abort = new AbortController();
  let made: ReturnType<NonNullable<typeof tool.preview>>;
  try {
    made = tool.preview(p.view.args, { signal: abort.signal });
  } catch (e) {
    return fallback(describeThrown(e));
  }
  const done = (preview: ApprovalPreview | undefined): PreExecuteOutcome => (preview ? { ...outcome, preview: boundedPreview(preview) } : { ...outcome, preview: argsPreview(p.view.args) });
  // Stryker disable next-line ConditionalExpression: a synchronous preview passed through Promise.resolve gives the same outcome, a few microtasks later
  if (!isPromise(made)) return done(made);
  const ms = deps.limits.hookTimeoutMs;
  return new Promise<PreExecuteOutcome>((resolve) => {
    const timer = deps.clock.setTimeout(() => {
      abort.abort(new Error('preview timed out'));
      resolve(fallback(`it took longer than ${ms} ms`));
    }, ms);
    Promise.resolve(made).then(
      (preview) => {
        deps.clock.clearTimeout(timer);
        resolve(done(preview));
      },
      (e: unknown) => {
        deps.clock.clearTimeout(timer);
        resolve(fallback(describeThrown(e)));
      },
    );
  });
}
