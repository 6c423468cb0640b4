/**
 * retry: another attempt after a transient provider failure (rate limit, 5xx, a dropped
 * connection, a garbled stream), with exponential backoff. It answers the kernel's
 * `provider_error` hook with {retry, delayMs, maxAttempts}; the session's run controller reports
 * auto_retry_start / auto_retry_end, waits (abortRetry() cancels) and runs the turn again.
 *
 * Settings: retry.{enabled, maxRetries, baseDelayMs, maxDelayMs}; the session's
 * autoRetryEnabled (RPC set_auto_retry, /settings) turns it off for one session.
 */
import { definePlugin } from "../../core/kernel/index.js";
import { isRetryableError } from "../../core/engine/index.js";

export default definePlugin({
  name: "retry",
  version: "1.0.0",
  kernel: "^1.0.0",
  description: "Retries transient provider failures with exponential backoff",
  setup(api) {
    api.on("provider_error", ({ session, message, attempt }) => {
      const settings = api.kernel.settings.get().retry;
      if (!session.autoRetryEnabled || settings.enabled === false) return undefined;
      if (!isRetryableError(message.errorMessage) || attempt >= settings.maxRetries) return undefined;
      const delayMs = Math.min(settings.baseDelayMs * 2 ** attempt, settings.maxDelayMs ?? 60000);
      return { retry: true, delayMs, maxAttempts: settings.maxRetries };
    });
  },
});
