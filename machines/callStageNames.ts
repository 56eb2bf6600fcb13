/**
 * The names of a call's pipeline stages, as the toolCall machine (machines/toolCall.ts) has them:
 * no machine code, so a page can import them without XState. Browser-safe.
 */

/**
 * The pipeline stages of a call, in SPEC order (§2): the states of the toolCall machine a call passes
 * through before `settled` (a stage's waiting state, `preExecuteWaiting` or `postExecuteWaiting`,
 * and `aborting` belong to the stage they wait in). Stage events, the inspector's timings and
 * `result.metadata.durationsMs` are keyed by these names.
 */
export const CALL_STAGE_NAMES = ['validating', 'preExecute', 'awaitingApproval', 'guard', 'executing', 'postExecute', 'finalizing'] as const;
/** One of a call's stages, in `CALL_STAGE_NAMES`' order. */
export type CallStageName = (typeof CALL_STAGE_NAMES)[number];
