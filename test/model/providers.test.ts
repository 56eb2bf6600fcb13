/**
 * `resolveModel('provider:model')`: the real provider packages, loaded on demand; every failure is
 * a typed `ModelResolveError` with one line that says what to do.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MODEL_PROVIDERS, ModelResolveError, parseModelSpec, resolveModel } from '../../src/adapters/model/providers.js';
import { startLoopbackServer, type LoopbackServer } from './wire/loopbackServer.js';
import { openAiChatReply, openAiError } from './wire/openaiChat.js';
import { anthropicError } from './wire/anthropicMessages.js';
import { ofType, wireRuntime } from './wire/harness.js';

async function failure(p: Promise<unknown>): Promise<ModelResolveError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ModelResolveError);
  const err = e as ModelResolveError;
  expect(err.message).not.toMatch(/[\r\n]/);
  return err;
}

describe('resolveModel errors', () => {
  it('a spec without provider, with an unknown provider, or without a model name says how to write it', async () => {
    expect(await failure(resolveModel('gpt-4.1', { env: {} }))).toMatchObject({ code: 'BAD_MODEL_SPEC', message: expect.stringContaining('openai:gpt-4.1') });
    expect(await failure(resolveModel('mistral:large', { env: {} }))).toMatchObject({ code: 'UNKNOWN_PROVIDER', message: expect.stringContaining('openai, anthropic, openai-compatible, deepseek') });
    expect(await failure(resolveModel('anthropic:', { env: {} }))).toMatchObject({ code: 'BAD_MODEL_SPEC', message: expect.stringContaining('anthropic:MODEL') });
    expect(await failure(resolveModel('openai:gpt\n-x', { env: {} }))).toMatchObject({ code: 'BAD_MODEL_SPEC' });
    // Hostile provider names never reach Object prototype lookups.
    expect(await failure(resolveModel('__proto__:x', { env: {} }))).toMatchObject({ code: 'UNKNOWN_PROVIDER' });
  });

  it('a missing key names the environment variable to set', async () => {
    expect(await failure(resolveModel('openai:gpt-4.1', { env: {} }))).toMatchObject({ code: 'MISSING_API_KEY', message: 'openai needs an API key: set OPENAI_API_KEY in the environment' });
    expect(await failure(resolveModel('anthropic:claude-sonnet-4-5', { env: { ANTHROPIC_API_KEY: '  ' } }))).toMatchObject({ code: 'MISSING_API_KEY', message: expect.stringContaining('ANTHROPIC_API_KEY') });
  });

  it('a missing package is said before a missing key (installing it comes first)', async () => {
    const notInstalled = () => import(/* @vite-ignore */ ['@ai-sdk', 'not-installed-dsh-probe'].join('/'));
    expect(await failure(resolveModel('openai:gpt-4.1', { env: {}, importPackage: notInstalled }))).toMatchObject({ code: 'MISSING_PACKAGE' });
    expect(await failure(resolveModel('deepseek:deepseek-chat', { env: {}, importPackage: notInstalled }))).toMatchObject({
      code: 'MISSING_PACKAGE',
      message: 'the model provider package @ai-sdk/deepseek is not installed: run npm i @ai-sdk/deepseek@2.0',
    });
  });

  it('openai-compatible needs --base-url (and a URL that is http)', async () => {
    expect(await failure(resolveModel('openai-compatible:qwen3:8b', { env: {} }))).toMatchObject({ code: 'MISSING_BASE_URL', message: expect.stringContaining('--base-url') });
    expect(await failure(resolveModel('openai-compatible:qwen3', { baseUrl: 'file:///etc', env: {} }))).toMatchObject({ code: 'MISSING_BASE_URL' });
  });

  it('a provider package that is not installed gives the npm command (a real failed import)', async () => {
    const err = await failure(
      resolveModel('openai:gpt-4.1', { env: { OPENAI_API_KEY: 'k' }, importPackage: () => import(/* @vite-ignore */ ['@ai-sdk', 'not-installed-dsh-probe'].join('/')) }),
    );
    expect(err).toMatchObject({ code: 'MISSING_PACKAGE', message: 'the model provider package @ai-sdk/openai is not installed: run npm i @ai-sdk/openai@3.0' });
    // A package of the wrong shape (another major) is named too.
    expect(await failure(resolveModel('anthropic:c', { env: { ANTHROPIC_API_KEY: 'k' }, importPackage: async () => ({}) }))).toMatchObject({
      code: 'MISSING_PACKAGE',
      message: expect.stringContaining('has no createAnthropic export'),
    });
  });

  it('parses model ids that contain colons (Ollama tags)', () => {
    expect(parseModelSpec('openai-compatible:qwen3:8b')).toEqual({ provider: 'openai-compatible', modelId: 'qwen3:8b' });
    expect(Object.keys(MODEL_PROVIDERS)).toEqual(['openai', 'anthropic', 'openai-compatible', 'deepseek']);
  });

  it('the real packages load and give LanguageModelV3 models', async () => {
    const env = { OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', DEEPSEEK_API_KEY: 'k' };
    const models = [
      await resolveModel('openai:gpt-4.1', { env }),
      await resolveModel('anthropic:claude-sonnet-4-5', { env }),
      await resolveModel('openai-compatible:llama3', { env, baseUrl: 'http://127.0.0.1:1/v1' }),
      await resolveModel('deepseek:deepseek-chat', { env }),
    ];
    expect(models.map((m) => [m.specificationVersion, m.provider, m.modelId])).toEqual([
      ['v3', 'openai.chat', 'gpt-4.1'],
      ['v3', 'anthropic.messages', 'claude-sonnet-4-5'],
      ['v3', 'openai-compatible.chat', 'llama3'],
      ['v3', 'deepseek.chat', 'deepseek-chat'],
    ]);
  });
});

describe('resolved models over the wire', () => {
  let server: LoopbackServer;
  beforeEach(async () => {
    server = await startLoopbackServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('openai-compatible:NAME --base-url talks Chat Completions to the server (Ollama, vLLM, LM Studio, llama.cpp), without a key', async () => {
    server.reply(openAiChatReply({ toolCalls: [{ id: 'call_1', name: 'read', arguments: '{"path":"a.txt"}' }] }), openAiChatReply({ text: ['local answer'] }));
    const { rt } = wireRuntime();
    const model = await resolveModel('openai-compatible:qwen3:8b', { baseUrl: `${server.url}/v1`, env: {} });
    const result = await rt.startTurn({ model, input: 'read a' }).done;
    expect(result).toMatchObject({ outcome: 'completed', text: 'local answer' });
    expect(server.requests.map((r) => [r.url, r.body.model, r.headers.authorization])).toEqual([
      ['/v1/chat/completions', 'qwen3:8b', undefined],
      ['/v1/chat/completions', 'qwen3:8b', undefined],
    ]);
  });

  it('OPENAI_BASE_URL and OPENAI_COMPATIBLE_API_KEY come from the environment', async () => {
    server.reply(openAiChatReply({ text: ['a'] }), openAiChatReply({ text: ['b'] }));
    const { rt } = wireRuntime();
    await rt.startTurn({ model: await resolveModel('openai:gpt-x', { env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${server.url}/v1` } }), input: 'x' }).done;
    await rt.startTurn({ model: await resolveModel('openai-compatible:m', { baseUrl: `${server.url}/v1`, env: { OPENAI_COMPATIBLE_API_KEY: 'local-key' } }), input: 'y' }).done;
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-env', 'Bearer local-key']);
  });

  it('a model the server does not know fails the turn with one line that says to check the model name', async () => {
    server.reply(
      openAiError(404, { message: 'The model `gpt-nope` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' }),
      anthropicError(404, 'not_found_error', 'model: claude-nope'),
    );
    const { rt } = wireRuntime();
    const openai = await rt.startTurn({ model: await resolveModel('openai:gpt-nope', { baseUrl: `${server.url}/v1`, env: { OPENAI_API_KEY: 'k' } }), input: 'x' }).done;
    const anthropic = await rt.startTurn({
      model: await resolveModel('anthropic:claude-nope', { baseUrl: `${server.url}/v1`, env: { ANTHROPIC_API_KEY: 'k' } }),
      input: 'x',
      callOptions: { maxOutputTokens: 10 },
    }).done;
    for (const r of [openai, anthropic]) {
      expect(r.outcome).toBe('failed');
      expect(r.error).toMatch(/model not found: .*\(check the model name given to --model\)/);
      expect(r.error).not.toMatch(/[\r\n]/);
    }
    expect(ofType(rt.log.events(), 'agent/request-error').map((e) => [e.kind, e.status, e.action])).toEqual([
      ['fatal', 404, 'give-up'],
      ['fatal', 404, 'give-up'],
    ]);
  });
});
