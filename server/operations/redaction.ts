/**
 * Provider secrets kept out of the failure messages the gateway writes
 * itself. The provider's own bytes (answers, streams, error bodies) are
 * redacted where the transport reads them (upstream/secret-redactor.ts).
 */
import { GatewayError } from '../errors.js';
import { REDACTED } from '../upstream/secret-redactor.js';

export { REDACTED };

export function redactText(text: string, secrets: readonly string[]): string {
  let redacted = text;
  for (const secret of secrets) if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
  return redacted;
}

export function redactError(error: GatewayError, secrets: readonly string[]): GatewayError {
  const message = redactText(error.message, secrets);
  if (message === error.message) return error;
  return new GatewayError(error.code, message, { status: error.status, param: error.param, retryAfter: error.retryAfter, cause: error.cause });
}
