import type { z } from 'zod';
import { GatewayError } from './errors.js';

/** Dotted path of a zod issue (`messages.0.content`), as the `param` of an error. */
export function issuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** Converts a zod error into a 400 INVALID_REQUEST naming the first field at fault. */
export function zodToGatewayError(error: z.ZodError): GatewayError {
  const issue = error.issues[0];
  const param = issue ? issuePath(issue.path) : null;
  const message = issue
    ? `Invalid value for '${param || 'body'}': ${issue.message}`
    : 'The request body is invalid.';
  return new GatewayError('INVALID_REQUEST', message, { param: param || null, cause: error });
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw zodToGatewayError(result.error);
  return result.data;
}

/**
 * The largest output cap a request may set: far above any model's (so no
 * real request is refused), low enough that a hold computed from it stays an
 * exact integer of micro-credits and every usage column stays in range.
 */
export const MAX_OUTPUT_TOKENS = 10_000_000;

/** Most choices (`n`) a chat completion may ask for (OpenAI's own bound). */
export const MAX_CHOICES = 128;

/** A value chat would take as `n`: a whole number of choices, 1 to {@link MAX_CHOICES}. */
export function isChoiceCount(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_CHOICES;
}
