/**
 * What a failed provider call's error message says, for the plugins that answer the
 * `provider_error` hook (plugins/retry: transient failures; plugins/compaction: a context
 * overflow). The session itself classifies nothing.
 */
const RETRYABLE =
  /overloaded|rate.?limit|too many requests|\b429\b|\b500\b|\b502\b|\b503\b|\b504\b|service.?unavailable|server.?error|internal.?error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay|ECONNRESET|socket hang up|in JSON at position|Unexpected (token|end of JSON)|is not valid JSON|could not parse|malformed server-sent event/i;
const OVERFLOW = /context.?(length|window)|too many tokens|prompt is too long|maximum context|exceeds the context|input is too long|token limit/i;

/**
 * Transient provider failures worth another attempt: rate limits, 5xx, dropped connections,
 * and a garbled stream (a response whose SSE did not parse). Context overflow is never retried.
 */
export function isRetryableError(message: string | undefined): boolean {
  if (!message) return false;
  return RETRYABLE.test(message) && !OVERFLOW.test(message);
}

/** The provider refused the request because the context is larger than the model's window. */
export function isContextOverflow(message: string | undefined): boolean {
  return !!message && OVERFLOW.test(message);
}
