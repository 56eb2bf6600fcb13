/**
 * What a listener answered, read defensively: an answer is user data, so each field is read once
 * into a fresh object (a getter may answer differently twice), and an answer that cannot even be
 * read is an invalid one, never an exception. A reason or feedback reaches the model and the
 * terminal: it is made visible and bounded here (SPEC §10.6, boundedVisible).
 */
import type { PostExecuteDecision, PreExecuteDecision } from '../../protocol/index.js';
import { boundedVisible } from '../../protocol/visibleText.js';

export const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' });

/** A decision's `rule` is cut to this many characters (it is a name, not a document). */
export const MAX_RULE_LENGTH = 500;

/** Whether an answer is a thenable; one whose `then` cannot even be read is not (it is then invalid). */
export function isPromise(v: unknown): v is Promise<unknown> {
  try {
    // `?.`: null and undefined have no `then`; a primitive's is its prototype's (none).
    // Stryker disable next-line OptionalChaining: without it undefined would throw and be caught as "no" all the same; ?. keeps the usual undefined answer off the exception path
    return v instanceof Promise || typeof (v as { then?: unknown } | null | undefined)?.then === 'function';
  } catch {
    // a `then` that cannot be read: not a thenable
  }
  return false;
}

/** Names what an invalid decision was without echoing it: it may hold the very content being redacted. */
export function describeDecision(d: unknown): string {
  if (d === null || typeof d !== 'object') return `(${d === null ? 'null' : typeof d})`;
  let kind: unknown;
  try {
    kind = (d as { kind?: unknown }).kind;
  } catch {
    return '(an object whose kind cannot be read)';
  }
  return typeof kind === 'string' ? `(kind ${JSON.stringify(kind.slice(0, 40))})` : '(an object without a kind)';
}

/** A pre-execute answer as a decision of its own, or undefined when it is none. */
export function readPreDecision(d: unknown): PreExecuteDecision | undefined {
  if (!d || typeof d !== 'object') return undefined;
  try {
    const { kind, reason, rule } = d as { kind?: unknown; reason?: unknown; rule?: unknown };
    if (rule !== undefined && typeof rule !== 'string') return undefined;
    const named = rule === undefined ? {} : { rule: rule.slice(0, MAX_RULE_LENGTH) };
    // A fresh object, never ALLOW: ALLOW is the chain's own answer when every listener handed over.
    if (kind === 'allow') return { kind, ...named };
    if (kind === 'deny' && typeof reason === 'string') return { kind, reason: boundedVisible(reason), ...named };
    if (kind === 'ask' && reason === undefined) return { kind, ...named };
    if (kind === 'ask' && typeof reason === 'string') return { kind, reason: boundedVisible(reason), ...named };
  } catch {
    // unreadable: invalid
  }
  return undefined;
}

/** A post-execute answer as a decision of its own, or undefined when it is none. */
export function readPostDecision(d: unknown): PostExecuteDecision | undefined {
  if (!d || typeof d !== 'object') return undefined;
  try {
    const { kind, feedback, content, metadata } = d as { kind?: unknown; feedback?: unknown; content?: unknown; metadata?: unknown };
    if (kind === 'block') return typeof feedback === 'string' ? { kind, feedback: boundedVisible(feedback) } : undefined;
    if (kind !== 'accept') return undefined;
    if (content !== undefined && typeof content !== 'string') return undefined;
    if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null)) return undefined;
    // Absent fields stay undefined (the stage keeps what the draft had); metadata is copied once.
    return { kind, content, metadata: { ...(metadata as Record<string, unknown> | undefined) }, value: (d as { value?: unknown }).value } as PostExecuteDecision;
  } catch {
    // unreadable: invalid
  }
  return undefined;
}
