import * as z from 'zod';

/** What one `tools/pre-execute` listener decides (SPEC §2.1). `next()` is the fourth option. */
export const PreExecuteDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('allow') }),
  z.object({ kind: z.literal('deny'), reason: z.string() }),
  z.object({ kind: z.literal('ask'), reason: z.string().optional() }),
]);
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
export type PostExecuteDecision = z.infer<typeof PostExecuteDecisionSchema>;

export const ApprovalAnswerSchema = z.enum(['allowed-once', 'allowed-always', 'denied']);
export type ApprovalAnswer = z.infer<typeof ApprovalAnswerSchema>;
