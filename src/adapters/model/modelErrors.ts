/**
 * Provider-shaped request errors for scripts: the same `APICallError` class real AI SDK providers
 * throw, with the status codes, bodies and headers real APIs send.
 */
import { APICallError } from '@ai-sdk/provider';

const URL = 'scripted://dsh/model';

/** An `APICallError` with the given status; `isRetryable` follows the AI SDK default (408/409/429/5xx) unless given. */
export function apiCallError(options: {
  statusCode: number;
  message: string;
  responseBody?: string;
  responseHeaders?: Record<string, string>;
  isRetryable?: boolean;
}): APICallError {
  return new APICallError({
    message: options.message,
    url: URL,
    requestBodyValues: {},
    statusCode: options.statusCode,
    ...(options.responseBody !== undefined ? { responseBody: options.responseBody } : {}),
    ...(options.responseHeaders ? { responseHeaders: options.responseHeaders } : {}),
    ...(options.isRetryable !== undefined ? { isRetryable: options.isRetryable } : {}),
  });
}

/** HTTP 429, optionally with a `retry-after` header (seconds). */
export function rateLimitError(retryAfterSeconds?: number): APICallError {
  return apiCallError({
    statusCode: 429,
    message: 'Rate limit reached for requests',
    responseBody: JSON.stringify({ error: { type: 'rate_limit_error', message: 'Rate limit reached for requests' } }),
    ...(retryAfterSeconds !== undefined ? { responseHeaders: { 'retry-after': String(retryAfterSeconds) } } : {}),
  });
}

/** A 5xx server error (default 503 overloaded). */
export function serverError(statusCode = 503): APICallError {
  return apiCallError({ statusCode, message: 'The server is overloaded', responseBody: JSON.stringify({ error: { type: 'overloaded_error', message: 'Overloaded' } }) });
}

/** A context-window overflow as OpenAI (400 `context_length_exceeded`) or Anthropic (413-style `prompt is too long`) report it. */
export function contextOverflowError(style: 'openai' | 'anthropic' = 'openai'): APICallError {
  if (style === 'anthropic') {
    return apiCallError({
      statusCode: 413,
      message: 'prompt is too long: 212345 tokens > 200000 maximum',
      responseBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 212345 tokens > 200000 maximum' } }),
    });
  }
  return apiCallError({
    statusCode: 400,
    message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens.",
    responseBody: JSON.stringify({ error: { code: 'context_length_exceeded', type: 'invalid_request_error', message: "This model's maximum context length is 128000 tokens." } }),
  });
}
