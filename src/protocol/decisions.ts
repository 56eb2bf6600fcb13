import * as z from 'zod';

/** What one `tools/pre-execute` listener decides (SPEC §2.1). `next()` is the fourth option. */
export const PreExecuteDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('allow'), rule: z.string().optional() }),
  z.object({ kind: z.literal('deny'), reason: z.string(), rule: z.string().optional() }),
  z.object({ kind: z.literal('ask'), reason: z.string().optional(), rule: z.string().optional() }),
]);
/**
 * What a `tools/pre-execute` listener returns: allow, deny with a reason, or ask the user (SPEC §2.1).
 * A decision may name the `rule` inside the listener that decided (`permissions[2] …`): it is
 * recorded in the result's `decision`, never shown to the model.
 */
export type PreExecuteDecision = z.infer<typeof PreExecuteDecisionSchema>;

/**
 * Who decided a call that a policy allowed outright, denied, asked about, blocked or failed closed
 * (absent when every listener handed over): the stage,
 * what it decided, the listener, guard or hook by its registered name, and the rule inside it when
 * it named one. A `tool/result` carries it as `result.decision` (issue 26: provenance in the log).
 */
export const DecisionProvenanceSchema = z.object({
  /** `approval`: the person (or the memory of an `allowed-always`), the approval deadline, or a cancel while asking decided last; `execute`: a cancel while the body ran. */
  stage: z.enum(['pre-execute', 'approval', 'guard', 'execute', 'post-execute']),
  outcome: z.enum(['allow', 'deny', 'ask', 'block', 'failed', 'cancelled', 'timeout']),
  /** The listener's, guard's or hook's registered name (`dsh:permissions`, `dsh:hook preExecute[0] ./check.sh`). */
  by: z.string(),
  /** The rule inside it, when it named one (`permissions[2] (tool "write", path ".env")`, `bash.deny[0] /^rm\\s/`). */
  rule: z.string().optional(),
});
/** Which stage and which listener, guard or hook decided a call last, and the rule it named (see `DecisionProvenanceSchema`). */
export type DecisionProvenance = z.infer<typeof DecisionProvenanceSchema>;

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

/**
 * What an approval shows of the call it asks about (SPEC §10.5): a unified diff of the change to
 * a file (`edit`, `write`), the command (`bash`), or the arguments (any other tool). Bounded: a
 * longer one is cut, ending with a marker line, and `truncated` is set.
 */
export const ApprovalPreviewSchema = z.object({
  kind: z.enum(['diff', 'command', 'args']),
  text: z.string(),
  truncated: z.boolean().optional(),
});
/** What an approval shows of the call it asks about: a diff, a command, or the arguments (see `ApprovalPreviewSchema`). */
export type ApprovalPreview = z.infer<typeof ApprovalPreviewSchema>;

/** A denial with the person's reason (given to the model in the call's `APPROVAL_DENIED` result). */
export interface ApprovalDenial {
  readonly answer: 'denied';
  readonly reason: string;
}
