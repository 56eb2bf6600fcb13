/**
 * The schema of `dsh.config.json` (and of the user-level `$XDG_CONFIG_HOME/dsh/config.json`).
 * Every object is strict, so a misspelt key is an error naming it rather than a setting silently
 * ignored. Bash deny patterns are compiled here, so a pattern RE2 rejects fails at load time.
 */
import * as z from 'zod';
import { compileBashPattern } from '../runtime/policies/bashDenyGuard.js';
import { compileGlob } from '../runtime/policies/pathGlob.js';
import { McpServersSchema } from './mcpServers.js';

const positiveInt = (max: number) => z.number().int().min(1).max(max);

/** A glob of a permission rule, compiled here so a bad one fails at load time naming its field. */
const GlobSchema = z.string().min(1).superRefine((g, ctx) => {
  try {
    compileGlob(g);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
  }
});

/** An example call: the tool and its arguments. */
export const ExampleCallSchema = z.strictObject({
  tool: z.string().min(1),
  args: z.record(z.string(), z.json()),
});

/**
 * Example calls a rule documents and the config must decide as listed: `allow` (runs without a
 * question), `ask`, `deny`. Checked against the config's rules (plan mode, command rules,
 * permission rules, bash deny patterns) when the config loads, and by `dsh policy test`.
 */
const examplesOf = <T extends z.ZodType>(call: T) =>
  z
    .strictObject({
      allow: z.array(call).max(100).optional(),
      ask: z.array(call).max(100).optional(),
      deny: z.array(call).max(100).optional(),
    })
    .optional();

export const PermissionRuleSchema = z.strictObject({
  /** Glob over tool names (`write`, `*`, `github__*` for an MCP server named github). */
  tool: GlobSchema,
  /** Glob over the `path` argument, relative to the workspace root. */
  path: GlobSchema.optional(),
  decision: z.enum(['allow', 'deny', 'ask']),
  /** Shown to the model (deny) or the approver (ask). */
  reason: z.string().min(1).optional(),
  /** Calls this rule is for, and what the config must decide about each. */
  examples: examplesOf(ExampleCallSchema),
});

const BashPatternSourceSchema = z.string().min(1).superRefine((p, ctx) => {
  try {
    compileBashPattern(p);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
  }
});

/** A pattern, or a pattern with example commands (`"rm -rf build"`) the config must decide as listed. */
const BashPatternSchema = z.union([
  BashPatternSourceSchema,
  z.strictObject({ pattern: BashPatternSourceSchema, examples: examplesOf(z.string().min(1).max(8192)) }),
]);

export const TimeoutsSchema = z.strictObject({
  /** A pre/post-execute listener that has not answered by then fails the call (HOOK_FAILED). */
  hookMs: positiveInt(3_600_000).optional(),
  /** An unanswered approval is APPROVAL_DENIED after this. */
  approvalMs: positiveInt(86_400_000).optional(),
  /** After a cancel, how long a started body may take to settle. */
  abortGraceMs: positiveInt(600_000).optional(),
  /** `bash` deadline when a call gives none. */
  bashMs: positiveInt(86_400_000).optional(),
});

const hookEntryFields = {
  /** The argv, program first: a program with a `/` is taken from the workspace root (put scripts under `.dsh/hooks/`). */
  command: z.array(z.string().min(1).regex(/^[^\0]*$/, 'no NUL bytes')).min(1).max(256),
  /** Glob over tool names (default every tool). */
  tools: GlobSchema.optional(),
  /** Glob over the `path` argument, relative to the workspace root. */
  paths: GlobSchema.optional(),
  /** How long the hook may take (default 30 s; never more than `timeouts.hookMs`). */
  timeoutMs: positiveInt(600_000).optional(),
};

/** A preExecute or guard hook: it decides, so it may carry examples checked at load. */
export const DecidingHookSchema = z.strictObject({
  ...hookEntryFields,
  /** `allow`: calls the hook must not deny; `deny`: calls it must deny. A failing example refuses the config. */
  examples: z.strictObject({ allow: z.array(ExampleCallSchema).optional(), deny: z.array(ExampleCallSchema).optional() }).optional(),
});

/** A postExecute or result hook. */
export const ObservingHookSchema = z.strictObject(hookEntryFields);

/** Command hooks, one list per stage (docs/hooks.md). */
export const HooksSchema = z.strictObject({
  preExecute: z.array(DecidingHookSchema).optional(),
  guard: z.array(DecidingHookSchema).optional(),
  postExecute: z.array(ObservingHookSchema).optional(),
  result: z.array(ObservingHookSchema).optional(),
});

/** The model request settings a config may set (no headers: a config file is no place for secrets). */
export const CallOptionsSchema = z.strictObject({
  maxOutputTokens: z.number().int().min(1).max(10_000_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.number().int().min(1).optional(),
  seed: z.number().int().optional(),
  stopSequences: z.array(z.string().min(1)).max(16).optional(),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
  /** Provider-specific options by provider name (`{ "openai": { "reasoningEffort": "low" } }`). */
  providerOptions: z.record(z.string(), z.record(z.string(), z.json())).optional(),
});

/** The schema of `dsh.config.json` (and the user config): model, permissions, bash patterns, hooks, MCP servers, sandbox, timeouts. */
export const DshConfigSchema = z.strictObject({
  /** A JSON-schema reference for editors; ignored. */
  $schema: z.string().optional(),
  /** The default model, `provider:model-id` (e.g. `anthropic:claude-sonnet-4-5`). */
  model: z.string().min(1).optional(),
  /** The provider's server (Ollama, vLLM, a proxy): used with `model`, and with a `--model` of the same provider. */
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** Per-request settings for the model (the AI SDK's call options). */
  callOptions: CallOptionsSchema.optional(),
  /** Project instructions added to the system prompt, after those of AGENTS.md files. */
  instructions: z.string().min(1).max(100_000).optional(),
  /** Plan mode: only read-only tools run. */
  plan: z.boolean().optional(),
  /** First matching rule decides. */
  permissions: z.array(PermissionRuleSchema).optional(),
  /** The tools the default question asks about when no rule decided (default `write`, `edit`, `bash`; `[]`: none). */
  askBefore: z.array(z.string().min(1).max(200)).max(100).optional(),
  bash: z
    .strictObject({
      /** RE2 patterns over each command a line runs (shell-parsed): a match is refused before any question (POLICY_DENIED), and by the guard after any approval. */
      deny: z.array(BashPatternSchema).optional(),
      /** RE2 patterns: a line whose every command matches runs without a question; any other line is asked about. */
      allow: z.array(BashPatternSchema).optional(),
    })
    .optional(),
  /** Command hooks per stage: programs that get the call as JSON on stdin and answer JSON (docs/hooks.md). */
  hooks: HooksSchema.optional(),
  /** Most concurrency-safe calls of one step running at once. */
  concurrency: positiveInt(256).optional(),
  /** Results larger than this many UTF-8 bytes are spilled. */
  maxInlineBytes: z.number().int().min(256).max(64 * 1024 * 1024).optional(),
  /** Most UTF-8 bytes of one prompt, follow-up or steer (and of the steers waiting together); default 1 MiB. */
  maxMessageBytes: z.number().int().min(1024).max(256 * 1024 * 1024).optional(),
  timeouts: TimeoutsSchema.optional(),
  /** The context window requests must fit in: old results are stubbed and old turns summarised. */
  context: z
    .strictObject({
      /** Prompt characters per request (text, arguments, results; ≈ 4 per token). */
      maxChars: z.number().int().min(1_000).max(100_000_000),
      /** Who writes the summary of folded turns: the session's model, or a deterministic digest (default). */
      summarize: z.enum(['model', 'digest']).optional(),
    })
    .optional(),
  /** MCP servers by name (entry schema: see mcpServers.ts). */
  mcpServers: McpServersSchema.optional(),
  /**
   * The OS sandbox `bash` runs commands in (SPEC §10.2). `mode`: `workspace-write` (default),
   * `read-only` or `full-access` (no confinement); `network`: let commands reach the network
   * (default false); `passEnv`: environment names passed to commands on top of the allowlist
   * (docs/sandbox.md); `denyRead`: more paths no command may read (`~/…` or absolute), on top of
   * the credential places hidden by default; `allowRead`: paths taken off that list (honoured
   * from the user's own config file only); `unixSockets`: let commands make Unix sockets (default
   * false; `true` honoured from the user's own config file only).
   */
  sandbox: z
    .strictObject({
      mode: z.enum(['read-only', 'workspace-write', 'full-access']).optional(),
      network: z.boolean().optional(),
      passEnv: z.array(z.string().min(1).regex(/^[^=\0]+$/, 'an environment variable name')).optional(),
      denyRead: z.array(z.string().regex(/^(~|~\/|\/)[^\0]*$/, 'a path starting with / or ~/')).optional(),
      allowRead: z.array(z.string().regex(/^(~|~\/|\/)[^\0]*$/, 'a path starting with / or ~/')).optional(),
      unixSockets: z.boolean().optional(),
    })
    .optional(),
  /**
   * OpenTelemetry traces and metrics over OTLP/HTTP (docs/telemetry.md), as `--otel` turns on:
   * `enabled` (default true once the block is there), `endpoint` (the collector's base URL; the
   * standard `OTEL_EXPORTER_OTLP_*` variables win), `serviceName` (default `dsh`; `OTEL_SERVICE_NAME`
   * wins), `recordContent` (call arguments and results on the spans; default false). No headers:
   * a config file is no place for secrets (`OTEL_EXPORTER_OTLP_HEADERS`).
   */
  otel: z
    .strictObject({
      enabled: z.boolean().optional(),
      endpoint: z.url({ protocol: /^https?$/ }).optional(),
      serviceName: z.string().min(1).max(256).optional(),
      recordContent: z.boolean().optional(),
    })
    .optional(),
  /** PostgreSQL URL of the session store and turn queue (`dsh worker`, `dsh submit`); env `DSH_DATABASE_URL` wins. */
  database: z.string().min(1).optional(),
});

/** A parsed, valid config (see `DshConfigSchema`). */
export type DshConfig = z.infer<typeof DshConfigSchema>;
export type PermissionRuleConfig = z.infer<typeof PermissionRuleSchema>;
export type HooksConfig = z.infer<typeof HooksSchema>;
export type BashPatternConfig = z.infer<typeof BashPatternSchema>;
export type ExampleCallConfig = z.infer<typeof ExampleCallSchema>;
