import * as z from 'zod';

/** What one `tools/pre-execute` listener decides (SPEC §2.1). `next()` is the fourth option. */
export const PreExecuteDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('allow') }),
  z.object({ kind: z.literal('deny'), reason: z.string() }),
  z.object({ kind: z.literal('ask'), reason: z.string().optional() }),
]);
/** What a `tools/pre-execute` listener returns: allow, deny with a reason, or ask the user (SPEC §2.1). */
export type PreExecuteDecision = z.infer<typeof PreExecuteDecisionSchema>;

/** What one `tools/post-execute` listener decides (SPEC §2.5). */
export const PostExecuteDecisionSchema = z.union([
  z.object({
    kind: z.literal('accept'),
    /** Replace the display content only (value and metadata kept). */
    content: z.string().optional(),
    /** Replace the canonical value: re-validated, content recomputed from it. */
    value: z.unknown().optional(),
    /** Keys merged into the result's metadata (for example a spill locator). */
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({ kind: z.literal('block'), feedback: z.string() }),
]);
/** What a `tools/post-execute` listener returns: accept (optionally replacing the content or the value) or block with feedback (SPEC §2.5). */
export type PostExecuteDecision = z.infer<typeof PostExecuteDecisionSchema>;

/** The answers an approval service can give; anything but `allowed-once` or `allowed-always` denies (SPEC §8.3). */
export const ApprovalAnswerSchema = z.enum(['allowed-once', 'allowed-always', 'denied']);
/** An approval service's answer: `allowed-once`, `allowed-always` (remembered for the session) or `denied`. */
export type ApprovalAnswer = z.infer<typeof ApprovalAnswerSchema>;
