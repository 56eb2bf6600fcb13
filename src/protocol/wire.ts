/**
 * The session wire protocol (SPEC §11, docs/protocol.md): how a server serves a session to a page.
 * Down, over Server-Sent Events: the session log's events in `seq` order (each frame's SSE `id` is
 * its `seq`, so a client resumes with `Last-Event-ID`), and live-only frames (no `id`) that lose
 * nothing when missed. Up, JSON POSTs: commands, each with an `Idempotency-Key`. Every shape is a
 * versioned zod schema; docs/protocol.schema.json is generated from them (`npm run docs:protocol`).
 * Browser-safe.
 */
import * as z from 'zod';
import { TurnOutcomeSchema } from './events.js';

/** The protocol's version: the `hello` frame and the `dsh-protocol` response header carry it. */
export const WIRE_PROTOCOL_VERSION = 1;

/** A session id as URLs name it: 1 to 128 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit (never a path). */
export const WIRE_SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The SSE event name of a log event frame (`id:` its `seq`, `data:` the event as JSON). */
export const LOG_FRAME = 'log';
/** The SSE event name of a live-only frame (no `id:`; `data:` a `LiveFrame`). */
export const LIVE_FRAME = 'live';

/** What a person answers to an approval (`POST …/approvals/:approvalId`). */
export const WireAnswerSchema = z.enum(['allow-once', 'allow-always', 'deny', 'suspend']);
/** What a person answers to an approval (see `WireAnswerSchema`). */
export type WireAnswer = z.infer<typeof WireAnswerSchema>;

const text = (max: number) => z.string().min(1).max(max);

/** `POST …/turns`: start a turn, or queue it behind the running one. */
export const StartTurnCommandSchema = z.strictObject({ input: text(100_000) });
/** `POST …/follow-ups`: queue a follow-up of the latest turn. */
export const FollowUpCommandSchema = z.strictObject({ input: text(100_000) });
/** `POST …/steer`: a message for the running turn's next model request. */
export const SteerCommandSchema = z.strictObject({ turnId: text(200), message: text(100_000) });
/** `POST …/cancel`: cancel a turn. */
export const CancelCommandSchema = z.strictObject({ turnId: text(200), reason: z.string().max(2_000).optional() });
/** `POST …/resume`: continue the session's suspended turn (its questions are asked again). */
export const ResumeCommandSchema = z.strictObject({});
/** `POST …/approvals/:approvalId`: answer one approval; `reason` goes with `deny` only. */
export const ApprovalCommandSchema = z
  .strictObject({ answer: WireAnswerSchema, reason: z.string().max(4_000).optional() })
  .refine((c) => c.reason === undefined || c.answer === 'deny', { message: 'reason goes with "deny" only', path: ['reason'] });

/** The body of `POST …/turns` (see `StartTurnCommandSchema`). */
export type StartTurnCommand = z.infer<typeof StartTurnCommandSchema>;
/** The body of `POST …/steer` (see `SteerCommandSchema`). */
export type SteerCommand = z.infer<typeof SteerCommandSchema>;
/** The body of `POST …/cancel` (see `CancelCommandSchema`). */
export type CancelCommand = z.infer<typeof CancelCommandSchema>;
/** The body of `POST …/approvals/:approvalId` (see `ApprovalCommandSchema`). */
export type ApprovalCommand = z.infer<typeof ApprovalCommandSchema>;

/** How an approval was answered, as a later answer is told (409): a person's answer, or how it ended unanswered. */
export const WinningAnswerSchema = z.strictObject({
  answer: z.enum(['allow-once', 'allow-always', 'deny', 'suspend', 'timeout', 'cancelled', 'remembered']),
  reason: z.string().optional(),
  /** `seq` of its `tool/approval-answer`, once that is in the log. */
  seq: z.number().int().positive().optional(),
});
/** How an approval was answered, as a later answer is told (see `WinningAnswerSchema`). */
export type WinningAnswer = z.infer<typeof WinningAnswerSchema>;

/** The stable codes of a refused request. */
export const WireErrorCodeSchema = z.enum([
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'BAD_REQUEST',
  'UNSUPPORTED_MEDIA_TYPE',
  'PAYLOAD_TOO_LARGE',
  'IDEMPOTENCY_KEY_REQUIRED',
  'IDEMPOTENCY_KEY_REUSED',
  'ALREADY_ANSWERED',
  'NOT_WAITING',
  'CONFLICT',
  'UNAVAILABLE',
]);
/** The stable code of a refused request (see `WireErrorCodeSchema`). */
export type WireErrorCode = z.infer<typeof WireErrorCodeSchema>;

/** The body of every refused request. */
export const WireErrorSchema = z.strictObject({
  error: z.strictObject({ code: WireErrorCodeSchema, message: z.string() }),
  /** With `ALREADY_ANSWERED`: the answer that won. */
  winner: WinningAnswerSchema.optional(),
});
/** The body of a refused request (see `WireErrorSchema`). */
export type WireError = z.infer<typeof WireErrorSchema>;

/** The body of an accepted command. */
export const CommandResultSchema = z.union([
  /** `turns`, `follow-ups`, `resume`: the turn it started or queued. */
  z.strictObject({ ok: z.literal(true), turnId: z.string() }),
  /** `steer`: delivered into the running turn (its `user/steer` is `seq`), or made a follow-up turn. */
  z.strictObject({ ok: z.literal(true), delivered: z.literal('steer'), stepIndex: z.number().int().nonnegative(), seq: z.number().int().positive() }),
  z.strictObject({ ok: z.literal(true), delivered: z.literal('follow-up'), turnId: z.string() }),
  /** `cancel`, an approval: taken. */
  z.strictObject({ ok: z.literal(true) }),
]);
/** The body of an accepted command (see `CommandResultSchema`). */
export type CommandResult = z.infer<typeof CommandResultSchema>;

/** One session as `GET …/sessions` lists it. */
export const SessionSummarySchema = z.strictObject({
  id: z.string(),
  /** `seq` of its last event (0: empty). */
  lastSeq: z.number().int().nonnegative(),
  /** The first turn's input, when there is one. */
  title: z.string().optional(),
});
/** One session as `GET …/sessions` lists it (see `SessionSummarySchema`). */
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

const callRef = { turnId: z.string(), stepIndex: z.number().int().nonnegative(), callId: z.string() };

/**
 * A live-only frame: derivable from the log, or only of use while it is true. A client that misses
 * one loses nothing the log holds.
 * - `hello`: the first frame of every connection: the protocol version and the server's `lastSeq`
 *   when the connection opened.
 * - `delta`: a piece of a step's text or reasoning as it streams (the log keeps it coalesced).
 * - `stage`: a call entered a pipeline stage (SPEC §2), or left one.
 * - `turn`: a turn's lifecycle as a person waits on it (`queued` carries its input).
 * - `answerable`: the calls whose approval this server waits on now (its answer endpoint takes them).
 * - `actor`: the state a turn, step or call actor is in now, as the generated statecharts name it
 *   (`visualizations/*.svg`; a nested state `{ a: 'b' }` as `a_b`): what an inspector highlights.
 * - `session`: whether the log can still grow while this connection lasts: `false` for a recorded
 *   session, or once the run that wrote it has ended (nothing more will come; a page may close).
 */
export const LiveFrameSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('hello'), protocol: z.literal(WIRE_PROTOCOL_VERSION), sessionId: z.string(), lastSeq: z.number().int().nonnegative() }),
  z.strictObject({
    type: z.literal('delta'),
    turnId: z.string(),
    delta: z.discriminatedUnion('type', [
      z.strictObject({ type: z.enum(['text-delta', 'reasoning-delta']), stepIndex: z.number().int().nonnegative(), delta: z.string() }),
      z.strictObject({ type: z.literal('request-error'), stepIndex: z.number().int().nonnegative(), action: z.enum(['retry', 'compact', 'give-up']) }),
      z.strictObject({ type: z.literal('step-end'), stepIndex: z.number().int().nonnegative(), finishReason: z.string() }),
      z.strictObject({ type: z.literal('turn-end'), outcome: z.union([TurnOutcomeSchema, z.literal('suspended')]) }),
    ]),
  }),
  z.strictObject({
    type: z.literal('stage'),
    ...callRef,
    toolName: z.string(),
    index: z.number().int().nonnegative(),
    event: z.enum(['entered', 'exited']),
    stage: z.string(),
    at: z.number(),
  }),
  z.strictObject({
    type: z.literal('turn'),
    turnId: z.string(),
    state: z.enum(['queued', 'running', 'suspending', 'cancelling']),
    input: z.string().optional(),
    followUp: z.strictObject({ kind: z.enum(['follow-up', 'late-steer']), after: z.string() }).optional(),
  }),
  z.strictObject({ type: z.literal('answerable'), calls: z.array(z.strictObject(callRef)) }),
  z.strictObject({
    type: z.literal('actor'),
    kind: z.enum(['turn', 'step', 'call']),
    /** turn: its turnId; step: `<turnId>/<stepIndex>`; call: its callId. */
    key: z.string(),
    state: z.string(),
    /** ms since the epoch (the server's clock) when the actor was seen in it. */
    at: z.number(),
  }),
  z.strictObject({ type: z.literal('session'), live: z.boolean() }),
]);
/** A live-only frame of the event stream (see `LiveFrameSchema`). */
export type LiveFrame = z.infer<typeof LiveFrameSchema>;

/** The actions `authorize(request, sessionId, action)` is asked about. */
export const WireActionSchema = z.enum(['list', 'create', 'read', 'start', 'steer', 'cancel', 'resume', 'answer']);
/** An action `authorize` is asked about (see `WireActionSchema`). */
export type WireAction = z.infer<typeof WireActionSchema>;
