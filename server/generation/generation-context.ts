import type { AuthContext } from '../auth/authenticate.js';
import type { Context } from '../context.js';
import type { GenerationContext } from './generate.js';

/** The part of a procedure's context the generation pipeline uses. */
export function toGenerationContext(ctx: Context & { auth: AuthContext }): GenerationContext {
  return {
    services: ctx.services,
    auth: ctx.auth,
    requestId: ctx.requestId,
    signal: ctx.signal,
    headers: ctx.headers,
    query: ctx.query,
    responseHeaders: ctx.responseHeaders,
    receivedAt: ctx.receivedAt,
  };
}
