import type { z } from 'zod';
import type { ApprovalPreview } from '../protocol/index.js';
import type { Clock } from './clock.js';
import type { ToolProgress } from './pipeline/progress.js';

/** What a tool body gets besides its arguments. */
export interface ExecContext {
  /** Aborted on caller cancel, timeout or a wrapper's own reason. Forward it to anything slow. */
  readonly signal: AbortSignal;
  readonly callId: string;
  readonly clock: Clock;
  /** 1 for the first attempt, more when a retry wrapper runs the body again. */
  readonly attempt: number;
  /** A deep-frozen view of the runtime's shared context: bodies may read it, never change it. */
  readonly context: Readonly<Record<string, unknown>>;
  /** Records a `warning` event about this call in the session log. */
  readonly warn: (code: string, message: string, data?: Record<string, unknown>) => void;
  /**
   * Reports partial output or progress while the body runs: logged as `tool/progress` events,
   * coalesced (at most a few a second per call; the last update is logged before the result).
   * Never part of the model's prompt. Updates after the body settled or its signal aborted are ignored.
   */
  readonly progress: (update: ToolProgress) => void;
}

/** A tool as the runtime runs it: what `defineTool` returns from a {@link ToolSpec}, with every default filled in. */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: I;
  /** The input's JSON Schema as the model sees it, when `input` cannot express it (e.g. a tool from an MCP server). */
  readonly inputJsonSchema?: Readonly<Record<string, unknown>>;
  readonly output?: z.ZodType<O>;
  /** Opt-in parallelism: only calls for which this returns true may overlap others. */
  readonly isConcurrencySafe: (args: z.infer<I>) => boolean;
  /** Same args, same effect: the retry wrapper may run it again. Default false. */
  readonly idempotent: boolean;
  /**
   * Changes nothing outside the session (no file, process or network effect): plan mode lets only
   * these run. Default false; declare it with `defineTool({ readOnly: true })`.
   */
  readonly readOnly: boolean;
  /** The body (see {@link ToolSpec.execute}). */
  readonly execute: (args: z.infer<I>, exec: ExecContext) => Promise<O> | O;
  /**
   * Model-facing text for a value. Default: strings as they are, other values as JSON.
   * (Method syntax on purpose: a tool whose body only throws has `O = never` and must still fit `AnyTool`.)
   */
  toContent(value: O): string;
  /** Metadata of a result from its value (default none), e.g. an exit code a harness routes on. */
  toMetadata?(value: O): Record<string, unknown>;
  /** Synchronous last content-only fix, called exactly once per result the body produced. */
  readonly finalizeContent?: (content: string) => string;
  /**
   * What an `allowed-always` answer remembers for a call: keys, every one of which a later call
   * must have been approved for to skip the question; undefined: never remembered. Default: the
   * tool and its exact args (SPEC §8.3). `bash` remembers the whole parsed line (commandRules.ts).
   */
  readonly approvalKeys?: (args: z.infer<I>) => readonly string[] | undefined;
  /**
   * What an approval of this call shows (SPEC §10.5): e.g. the diff a file change would make.
   * Called only when the call is asked about, before the question; it must not change anything.
   * Default (or when it returns undefined or fails): the arguments.
   */
  readonly preview?: (args: z.infer<I>, ctx: PreviewContext) => Promise<ApprovalPreview | undefined> | ApprovalPreview | undefined;
}

/** What a tool's `preview` gets: aborted when the question is no longer needed (a cancel, a timeout). */
export interface PreviewContext {
  readonly signal: AbortSignal;
}

/** What you pass to `defineTool`: a name, a zod input schema and the body; everything else has a default. */
export interface ToolSpec<I extends z.ZodType, O> {
  name: string;
  description?: string;
  input: I;
  inputJsonSchema?: Readonly<Record<string, unknown>>;
  output?: z.ZodType<O>;
  /** Opt-in parallelism: true when a call with these arguments may overlap other safe calls (default: never, SPEC §3). */
  isConcurrencySafe?: (args: z.infer<I>) => boolean;
  idempotent?: boolean;
  /** Changes nothing outside the session: plan mode lets only read-only tools run. Default false. */
  readOnly?: boolean;
  /** The body: gets the frozen, validated arguments and an `exec` with the call's `signal` (honour it) and `progress`. */
  execute: (args: z.infer<I>, exec: ExecContext) => Promise<O> | O;
  /** The model-facing text of a value (default: a string as is, anything else as JSON). */
  toContent?: (value: O) => string;
  /** Metadata of a result from its value (default none). */
  toMetadata?: (value: O) => Record<string, unknown>;
  /** The last, synchronous fix of the content, called exactly once per result (SPEC §2.6). */
  finalizeContent?: (content: string) => string;
  /** What an `allowed-always` answer remembers for a call (see `ToolDefinition.approvalKeys`). */
  approvalKeys?: (args: z.infer<I>) => readonly string[] | undefined;
  /** What an approval of this call shows (see `ToolDefinition.preview`). */
  preview?: (args: z.infer<I>, ctx: PreviewContext) => Promise<ApprovalPreview | undefined> | ApprovalPreview | undefined;
}

/** Default content: a string value is its own content; anything else is its JSON. */
export function defaultContent(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value) ?? String(value);
}

/**
 * Declares a tool: its name, zod input (and optional output) schema and its body.
 *
 * @example
 * ```ts
 * const read = defineTool({
 *   name: 'read',
 *   description: 'Read a file',
 *   input: z.object({ path: z.string() }),
 *   isConcurrencySafe: () => true,
 *   execute: async ({ path }, exec) => `contents of ${path}`,
 * });
 * ```
 */
export function defineTool<I extends z.ZodType, O = unknown>(spec: ToolSpec<I, O>): ToolDefinition<I, O> {
  if (!/^[a-zA-Z0-9_.:-]{1,128}$/.test(spec.name)) throw new TypeError(`defineTool: invalid tool name ${JSON.stringify(spec.name)}`);
  return Object.freeze({
    name: spec.name,
    description: spec.description ?? '',
    input: spec.input,
    ...(spec.inputJsonSchema ? { inputJsonSchema: spec.inputJsonSchema } : {}),
    output: spec.output,
    isConcurrencySafe: spec.isConcurrencySafe ?? (() => false),
    idempotent: spec.idempotent ?? false,
    readOnly: spec.readOnly === true,
    execute: spec.execute,
    toContent: spec.toContent ?? defaultContent,
    toMetadata: spec.toMetadata,
    finalizeContent: spec.finalizeContent,
    ...(spec.approvalKeys ? { approvalKeys: spec.approvalKeys } : {}),
    ...(spec.preview ? { preview: spec.preview } : {}),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
/** A tool of any input and output type, as registries and runtimes hold them. */
export type AnyTool = ToolDefinition<any, any>;

/** The tools a runtime knows, by name. */
export class ToolRegistry {
  private readonly byName = new Map<string, AnyTool>();
  constructor(tools: readonly AnyTool[] = []) {
    for (const t of tools) this.register(t);
  }
  /** Adds a tool; a second tool of the same name is an error. */
  register(tool: AnyTool): void {
    if (this.byName.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    this.byName.set(tool.name, tool);
  }
  /** Removes a tool; true when it was there. Calls already prepared keep the definition they resolved. */
  unregister(name: string): boolean {
    return this.byName.delete(name);
  }
  /** The tool of that name, if registered. */
  get(name: string): AnyTool | undefined {
    return this.byName.get(name);
  }
  /** Every registered tool, in registration order. */
  list(): AnyTool[] {
    return [...this.byName.values()];
  }
}
