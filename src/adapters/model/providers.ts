/**
 * `provider:model` → an AI SDK `LanguageModelV3`. The provider packages are optional peer
 * dependencies, loaded with a dynamic import only when asked for, so dsh runs without them; every
 * way this can fail (bad spec, unknown provider, package not installed, no key, no base URL) is a
 * `ModelResolveError` whose message is one line that says what to do.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';

/** Why a model spec could not be turned into a model. */
export type ModelResolveErrorCode = 'BAD_MODEL_SPEC' | 'UNKNOWN_PROVIDER' | 'MISSING_PACKAGE' | 'MISSING_API_KEY' | 'MISSING_BASE_URL';

/** A model spec that cannot be used; `message` is one line that says what to do. */
export class ModelResolveError extends Error {
  override readonly name = 'ModelResolveError';
  constructor(
    readonly code: ModelResolveErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(oneLine(message), options);
  }
}

/** Options of `resolveModel`: the server, where keys are read from, extra headers. */
export interface ResolveModelOptions {
  /** The server to talk to: required for `openai-compatible`, optional for the others (a proxy, a test server). */
  baseUrl?: string;
  /** Where API keys are read from (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** Loads a provider package (default: dynamic `import`). For tests and bundlers. */
  importPackage?: (name: string) => Promise<unknown>;
}

interface ProviderInfo {
  readonly package: string;
  /** The environment variable the provider's own docs name for the key; undefined = no key needed. */
  readonly keyVar: string | undefined;
  /** The provider package's own base-URL variable, honoured when no `baseUrl` is given. */
  readonly baseUrlVar: string | undefined;
  readonly keyRequired: boolean;
}

/** The providers dsh knows, by the prefix of `provider:model`. */
export const MODEL_PROVIDERS = {
  openai: { package: '@ai-sdk/openai', keyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL', keyRequired: true },
  anthropic: { package: '@ai-sdk/anthropic', keyVar: 'ANTHROPIC_API_KEY', baseUrlVar: 'ANTHROPIC_BASE_URL', keyRequired: true },
  'openai-compatible': { package: '@ai-sdk/openai-compatible', keyVar: 'OPENAI_COMPATIBLE_API_KEY', baseUrlVar: 'OPENAI_COMPATIBLE_BASE_URL', keyRequired: false },
  deepseek: { package: '@ai-sdk/deepseek', keyVar: 'DEEPSEEK_API_KEY', baseUrlVar: 'DEEPSEEK_BASE_URL', keyRequired: true },
} as const satisfies Record<string, ProviderInfo>;

/** The providers `resolveModel` knows: `openai`, `anthropic`, `openai-compatible` and `deepseek`. */
export type ModelProviderName = keyof typeof MODEL_PROVIDERS;

/** A parsed `provider:model` spec. */
export interface ModelSpec {
  readonly provider: ModelProviderName;
  readonly modelId: string;
}

const MAX_SPEC = 512;

/** Splits `provider:model` (the model id may itself contain `:`, as Ollama tags do: `openai-compatible:qwen3:8b`). */
export function parseModelSpec(spec: string): ModelSpec {
  const known = Object.keys(MODEL_PROVIDERS).join(', ');
  if (typeof spec !== 'string' || spec.length > MAX_SPEC || /[\u0000-\u001f]/.test(spec)) {
    throw new ModelResolveError('BAD_MODEL_SPEC', `--model must be provider:model (one of ${known}), for example openai:gpt-4.1`);
  }
  const colon = spec.indexOf(':');
  if (colon <= 0) {
    throw new ModelResolveError('BAD_MODEL_SPEC', `--model ${quote(spec)} has no provider: write provider:model (one of ${known}), for example openai:${spec || 'gpt-4.1'}`);
  }
  const provider = spec.slice(0, colon).trim().toLowerCase();
  const modelId = spec.slice(colon + 1).trim();
  if (!Object.hasOwn(MODEL_PROVIDERS, provider)) {
    throw new ModelResolveError('UNKNOWN_PROVIDER', `unknown model provider ${quote(provider)} in --model ${quote(spec)}: use one of ${known}`);
  }
  if (!modelId) {
    throw new ModelResolveError('BAD_MODEL_SPEC', `--model ${quote(spec)} names no model: write ${provider}:MODEL, for example ${example(provider as ModelProviderName)}`);
  }
  return { provider: provider as ModelProviderName, modelId };
}

/**
 * Resolves `openai:MODEL` (Chat Completions), `anthropic:MODEL` (Messages), `deepseek:MODEL`
 * (DeepSeek's API: `deepseek-chat`, `deepseek-reasoner`) or `openai-compatible:MODEL` (needs
 * `baseUrl`: Ollama, vLLM, LM Studio, llama.cpp server) into a `LanguageModelV3`. The key comes
 * from the provider's usual environment variable. A missing package is said first: installing it
 * is the first thing to do, before finding a key.
 *
 * @example
 * ```ts
 * const model = await resolveModel('anthropic:claude-sonnet-4-5'); // ANTHROPIC_API_KEY
 * const local = await resolveModel('openai-compatible:llama3', { baseUrl: 'http://localhost:11434/v1' });
 * await rt.startTurn({ model, input: 'hello' }).done;
 * ```
 */
export async function resolveModel(spec: string, options: ResolveModelOptions = {}): Promise<LanguageModelV3> {
  const { provider, modelId } = parseModelSpec(spec);
  const info: ProviderInfo = MODEL_PROVIDERS[provider];
  const mod = await loadPackage(info.package, options.importPackage);
  const env = options.env ?? (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  const apiKey = info.keyVar ? nonEmpty(env[info.keyVar]) : undefined;
  if (info.keyRequired && apiKey === undefined) {
    throw new ModelResolveError('MISSING_API_KEY', `${provider} needs an API key: set ${info.keyVar} in the environment`);
  }
  const baseURL = nonEmpty(options.baseUrl) ?? (info.baseUrlVar ? nonEmpty(env[info.baseUrlVar]) : undefined);
  if (baseURL !== undefined && !isHttpUrl(baseURL)) {
    throw new ModelResolveError('MISSING_BASE_URL', `--base-url ${quote(baseURL)} is not an http(s) URL: give the server's API root, for example http://127.0.0.1:11434/v1`);
  }
  if (provider === 'openai-compatible' && baseURL === undefined) {
    throw new ModelResolveError(
      'MISSING_BASE_URL',
      `openai-compatible:${modelId} needs the server's URL: add --base-url, for example http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8000/v1 (vLLM)`,
    );
  }
  const common = { ...(baseURL !== undefined ? { baseURL } : {}), ...(options.headers ? { headers: options.headers } : {}) };
  try {
    switch (provider) {
      case 'openai': {
        const create = exportOf(mod, 'createOpenAI', info.package);
        const p = create({ ...common, apiKey }) as { chat(id: string): LanguageModelV3 };
        // Chat Completions: the protocol every OpenAI-style server speaks.
        return p.chat(modelId);
      }
      case 'anthropic': {
        const create = exportOf(mod, 'createAnthropic', info.package);
        return (create({ ...common, apiKey }) as { messages(id: string): LanguageModelV3 }).messages(modelId);
      }
      case 'openai-compatible': {
        const create = exportOf(mod, 'createOpenAICompatible', info.package);
        const p = create({ ...common, baseURL, name: 'openai-compatible', includeUsage: true, ...(apiKey !== undefined ? { apiKey } : {}) }) as {
          chatModel(id: string): LanguageModelV3;
        };
        return p.chatModel(modelId);
      }
      case 'deepseek': {
        const create = exportOf(mod, 'createDeepSeek', info.package);
        return (create({ ...common, apiKey }) as { chat(id: string): LanguageModelV3 }).chat(modelId);
      }
    }
  } catch (error) {
    if (error instanceof ModelResolveError) throw error;
    throw new ModelResolveError('MISSING_PACKAGE', `${info.package} could not create ${spec}: ${describe(error)}; install a version that uses @ai-sdk/provider 3 (npm i ${info.package}@${peerRange(info.package)})`, { cause: error });
  }
}

async function loadPackage(name: string, importPackage: ResolveModelOptions['importPackage']): Promise<unknown> {
  try {
    // A variable specifier: bundlers leave it alone, and the package stays optional.
    return await (importPackage ?? ((n: string) => import(/* @vite-ignore */ n)))(name);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /cannot find (module|package)/i.test(describe(error));
    throw new ModelResolveError(
      'MISSING_PACKAGE',
      missing ? `the model provider package ${name} is not installed: run npm i ${name}@${peerRange(name)}` : `the model provider package ${name} failed to load (${describe(error)}): reinstall it with npm i ${name}@${peerRange(name)}`,
      { cause: error },
    );
  }
}

type Factory = (settings: Record<string, unknown>) => unknown;

function exportOf(mod: unknown, name: string, pkg: string): Factory {
  const fn = (mod as Record<string, unknown> | null)?.[name];
  if (typeof fn !== 'function') {
    throw new ModelResolveError('MISSING_PACKAGE', `${pkg} has no ${name} export (wrong major version?): run npm i ${pkg}@${peerRange(pkg)}`);
  }
  return fn as Factory;
}

const PEER_RANGES: Record<string, string> = { '@ai-sdk/openai': '3.0', '@ai-sdk/anthropic': '3.0', '@ai-sdk/openai-compatible': '2.0', '@ai-sdk/deepseek': '2.0' };
function peerRange(pkg: string): string {
  return PEER_RANGES[pkg] ?? 'latest';
}

function example(provider: ModelProviderName): string {
  return provider === 'openai'
    ? 'openai:gpt-4.1'
    : provider === 'anthropic'
      ? 'anthropic:claude-sonnet-4-5'
      : provider === 'deepseek'
        ? 'deepseek:deepseek-chat'
        : 'openai-compatible:qwen3:8b --base-url http://127.0.0.1:11434/v1';
}

function nonEmpty(value: string | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}

function describe(error: unknown): string {
  try {
    return oneLine(error instanceof Error ? error.message : String(error));
  } catch {
    return 'unknown error';
  }
}

function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ').slice(0, 500);
}
