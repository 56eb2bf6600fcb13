/**
 * What `dsh run` and `dsh resume` decide before a session file is opened, in one place: the typed
 * flags they share, the config (dsh.config.json over the user's), the model (and where it came
 * from), the system prompt (AGENTS.md files and the config's `instructions`). Anything wrong here
 * (a bad config, a bad model spec, a missing key, no model at all, an unknown `--allow` tool)
 * fails before any file is made or changed.
 *
 * The model, first that applies:
 * - `--demo`: the embedded scripted model (on a throwaway copy, see demoWorkspace.ts);
 * - `--model SPEC` (`embedded` names the scripted demo model explicitly);
 * - resuming: the model the session's log last recorded (`session/model`);
 * - the config's `model`.
 * Else `dsh run` refuses (one line naming `--model`, the config's `model` and `--demo`).
 * The server: `--base-url`, else the recorded one (resuming the recorded model), else the config's
 * `baseUrl` when the model is the config's or of the same provider.
 */
import { builtinToolNames } from '../../adapters/tools/builtinTools.js';
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { resolveModel } from '../../adapters/model/providers.js';
import { scriptedModel, type ScriptedResponse } from '../../adapters/model/scriptedModel.js';
import { SessionModelEvent } from '../../protocol/events.js';
import { UsageError, type CliIo, type Command } from '../command.js';
import { colorWanted } from '../view/terminalRenderer.js';
import { loadConfig } from '../../config/load.js';
import { checkConfigHooks, shownConfigFile } from '../../config/hookChecks.js';
import type { DshConfig } from '../../config/schema.js';
import { onFile } from '../describeError.js';
import { trustedServers } from '../../config/serverTrust.js';
import { embeddedModel } from './embeddedModel.js';
import { systemPrompt, type SystemPrompt } from './projectInstructions.js';

/** A model as the session log records it (`session/model`): the spec and the server, never a key. */
export interface SessionModel {
  readonly spec: string;
  readonly baseUrl?: string;
}

/** The flags `dsh run` and `dsh resume` share, typed. */
export interface RunFlags {
  readonly model?: string;
  readonly baseUrl?: string;
  readonly json: boolean;
  readonly allow: readonly string[];
  readonly plan: boolean;
  readonly suspend: boolean;
  readonly noColor: boolean;
  /** `--otel`: export traces and metrics over OTLP/HTTP (also the config's `otel` block). */
  readonly otel: boolean;
  /** `--trust-project-servers`: start the project config's MCP servers this once without asking (CI). */
  readonly trustProjectServers?: boolean;
}

/** Splits `--allow a,b --allow c`. */
export function allowList(value: string | boolean | string[] | undefined): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

/** The parsed values of RUN_OPTIONS as RunFlags. */
export function readRunFlags(values: Record<string, string | boolean | string[] | undefined>): RunFlags {
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const model = str('model');
  const baseUrl = str('base-url');
  return {
    ...(model !== undefined ? { model } : {}),
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    json: values.json === true,
    allow: allowList(values.allow),
    plan: values.plan === true,
    suspend: values.suspend === true,
    noColor: values['no-color'] === true,
    otel: values.otel === true,
    trustProjectServers: values['trust-project-servers'] === true,
  };
}

/** `--allow foo` with a tool that does not exist is a usage error (it would silently do nothing). */
export function checkAllow(allow: readonly string[], config: DshConfig, command: Command): void {
  const servers = Object.keys(config.mcpServers ?? {});
  // The tools built into `dsh run`, or `server__tool` of a configured MCP server.
  const builtin = builtinToolNames().all;
  for (const name of allow) {
    if (builtin.includes(name)) continue;
    const sep = name.indexOf('__');
    if (sep > 0 && servers.includes(name.slice(0, sep)) && name.length > sep + 2) continue;
    const mcp = servers.length ? `, or server__tool of a configured MCP server (${servers.join(', ')})` : '';
    throw new UsageError(`--allow ${JSON.stringify(name)}: no such tool (the tools: ${builtin.join(', ')}${mcp})`, command, { usage: false });
  }
}

/** One y/n question on the terminal (stderr), before the session starts: `y` or `yes` is yes. */
function askOnTerminal(question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answered = false;
    rl.on('close', () => {
      if (!answered) resolve(false);
    });
    rl.question(question, (line) => {
      answered = true;
      rl.close();
      resolve(/^\s*y(es)?\s*$/i.test(line));
    });
  });
}

/** The model a run chose, and how it is made. */
export interface ModelChoice {
  readonly model: SessionModel;
  /** A model for each turn (the embedded one is made afresh per turn). */
  readonly make: () => LanguageModelV3;
  readonly source: '--demo' | '--model' | 'session log' | 'config';
}

export interface RunSetupResult {
  readonly config: DshConfig;
  readonly configFiles: readonly string[];
  readonly model: ModelChoice;
  readonly system: SystemPrompt;
}

/**
 * What `dsh run` and `dsh resume` both hand `runSession` from their flags and prepared setup: the
 * model, the system prompt, the config and the flags' effects, in one place (each adds its own:
 * the session's id and file, the prompt, `resume`, `--demo`'s allowances).
 */
export function sessionOptionsOf(
  setup: RunSetupResult,
  flags: RunFlags,
  o: { io: CliIo; env: Readonly<Record<string, string | undefined>>; isTTY: boolean },
) {
  return {
    models: setup.model.make,
    sessionModel: setup.model.model,
    system: setup.system.text,
    config: setup.config,
    plan: flags.plan,
    suspend: flags.suspend,
    otel: flags.otel,
    json: flags.json,
    allow: flags.allow,
    color: colorWanted({ noColor: flags.noColor, env: o.env, isTTY: o.isTTY }),
    io: o.io,
    env: o.env,
  };
}

export const NO_MODEL_MESSAGE = 'no model configured: pass --model provider:model (e.g. --model anthropic:claude-sonnet-4-5), set "model" in dsh.config.json, or try the demo on a throwaway copy with dsh run --demo';

/** The provider of a spec (`openai-compatible` of `openai-compatible:qwen3:8b`). */
const providerOf = (spec: string) => spec.slice(0, Math.max(0, spec.indexOf(':'))).toLowerCase();

/** User info and query of a URL left out (they may hold secrets); undefined when it is not a URL. */
export function recordableBaseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** Decides the config, the model and the system prompt of a run (nothing is written). */
export async function prepareRun(o: {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  flags: RunFlags;
  command: Command;
  demo?: boolean;
  /** Resuming: the model the log recorded last. */
  recorded?: SessionModel;
  /** Where a line about the config goes (a key of a config below the project root ignored); default stderr. */
  warn?: (line: string) => void;
  /** Asks whether to start a project's MCP server; default: on a terminal (stdin and stderr), else nobody. */
  ask?: (question: string) => Promise<boolean>;
  /** Ends the process (`CliIo.exit`): the bench's cold-start probe stops there (DSH_BENCH_EXIT_AT_FIRST_REQUEST). */
  exit?: (code: number) => never;
}): Promise<RunSetupResult> {
  const loaded = await loadConfig({ cwd: o.cwd, env: o.env });
  const { files, ignored } = loaded;
  const warn = o.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  for (const line of ignored) warn(line);
  checkAllow(o.flags.allow, loaded.config, o.command);
  // A project's MCP servers start only once the person trusted their exact command (serverTrust.ts).
  let config = loaded.config;
  if (config.mcpServers && Object.keys(loaded.serverOrigins).length > 0) {
    const ask = o.ask ?? (process.stdin.isTTY && process.stderr.isTTY ? askOnTerminal : undefined);
    const servers = await trustedServers({ servers: config.mcpServers, origins: loaded.serverOrigins, env: o.env, trustAll: o.flags.trustProjectServers === true, ...(ask ? { ask } : {}), warn });
    config = { ...config, mcpServers: servers };
  }
  // Command hooks: programs out of the agent's reach, examples that hold (else one ConfigError line).
  // (Hooks come from the user or the root config: a config below the root cannot add one.)
  if (config.hooks) await checkConfigHooks({ config, cwd: o.cwd, env: o.env, shownAs: shownConfigFile(o.cwd, files.filter((f) => !loaded.narrowing.includes(f))) });
  const chosen = chooseModel(o.flags, config, o.recorded, o.demo === true);
  if (!chosen) throw new UsageError(NO_MODEL_MESSAGE, o.command, { usage: false });
  const make = await modelFactory(chosen.model, { cwd: o.cwd, env: o.env, ...(o.exit ? { exit: o.exit } : {}) });
  const system = await systemPrompt({ cwd: o.cwd, env: o.env, ...(config.instructions ? { instructions: config.instructions } : {}) });
  return { config, configFiles: files, model: { ...chosen, make }, system };
}

function chooseModel(flags: RunFlags, config: DshConfig, recorded: SessionModel | undefined, demo: boolean): Omit<ModelChoice, 'make'> | undefined {
  const withUrl = (spec: string, fallback: string | undefined): SessionModel => {
    const url = flags.baseUrl ?? fallback;
    return url !== undefined && spec !== 'embedded' && !spec.startsWith('scripted:') ? { spec, baseUrl: url } : { spec };
  };
  const configUrl = (spec: string) => (config.baseUrl !== undefined && (!config.model || spec === config.model || providerOf(spec) === providerOf(config.model)) ? config.baseUrl : undefined);
  if (demo) return { model: { spec: 'embedded' }, source: '--demo' };
  if (flags.model !== undefined) {
    const sameAsRecorded = recorded?.spec === flags.model ? recorded.baseUrl : undefined;
    return { model: withUrl(flags.model, sameAsRecorded ?? configUrl(flags.model)), source: '--model' };
  }
  if (recorded) return { model: withUrl(recorded.spec, recorded.baseUrl), source: 'session log' };
  if (config.model) return { model: withUrl(config.model, config.baseUrl), source: 'config' };
  return undefined;
}

/** The model for each turn. */
export async function modelFactory(
  m: SessionModel,
  o: { cwd: string; env: Readonly<Record<string, string | undefined>>; exit?: (code: number) => never },
): Promise<() => LanguageModelV3> {
  if (m.spec === 'embedded') return o.exit ? withBenchProbe(() => embeddedModel({ cwd: o.cwd }), o.env, o.exit) : () => embeddedModel({ cwd: o.cwd });
  if (m.spec.startsWith('scripted:')) {
    const file = m.spec.slice('scripted:'.length);
    const steps = await onFile(file, async () => JSON.parse(readFileSync(file, 'utf8')) as unknown);
    if (!Array.isArray(steps)) throw new Error(`${file}: a scripted model is a JSON array of responses`);
    const model = scriptedModel(steps as ScriptedResponse[], { modelId: `scripted:${file}` });
    return () => model;
  }
  const model = await resolveModel(m.spec, { ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}), env: o.env });
  return () => model;
}

/**
 * `DSH_BENCH_EXIT_AT_FIRST_REQUEST=1` (bench/workloads/coldStart.ts): the process prints the time
 * of the first model request and exits there, so the cold start of `dsh run` can be measured.
 */
function withBenchProbe(make: () => LanguageModelV3, env: Readonly<Record<string, string | undefined>>, exit: (code: number) => never): () => LanguageModelV3 {
  if (!env.DSH_BENCH_EXIT_AT_FIRST_REQUEST) return make;
  return () => {
    const model = make();
    const doStream = model.doStream.bind(model);
    return Object.assign(Object.create(Object.getPrototypeOf(model) as object) as LanguageModelV3, model, {
      doStream: (...args: Parameters<LanguageModelV3['doStream']>) => {
        process.stderr.write(`first model request at ${performance.now().toFixed(1)} ms\n`);
        exit(0);
        return doStream(...args);
      },
    });
  };
}

/** The last `session/model` a log recorded (read line by line; the log is not opened for writing). */
export async function recordedModel(file: string): Promise<SessionModel | undefined> {
  let last: SessionModel | undefined;
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.includes('"session/model"')) continue;
      try {
        // A line is `<crc32c> <json>` (jsonlSink.ts); the checksum is the full replay's to check.
        const r = SessionModelEvent.safeParse(JSON.parse(/^[0-9a-f]{8} /.test(line) ? line.slice(9) : line));
        if (r.success) last = r.data.model;
      } catch {
        // a torn or foreign line: the log's own reading reports it
      }
    }
  } catch {
    return last;
  }
  return last;
}
