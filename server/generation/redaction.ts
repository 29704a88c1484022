/**
 * Provider secrets (API keys, secret header values) kept out of everything a
 * client sees: error messages and the bytes of a passed-through answer, in
 * which a provider may echo them.
 */
import { GatewayError } from '../errors.js';

export const REDACTED = '[redacted]';

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

/** Whether bytes hold one of the secrets (a byte search, no decoding: the common case costs one scan per secret). */
export function containsSecret(bytes: Uint8Array, secrets: readonly string[]): boolean {
  if (secrets.length === 0) return false;
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const secret of secrets) if (buffer.includes(secret)) return true;
  return false;
}
