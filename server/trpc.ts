import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { Context } from './context.js';
import { ERROR_TABLE, GatewayError, toGatewayError, trpcCodeForStatus } from './errors.js';
import { issuePath } from './validation.js';

/** The only initTRPC of the project. */
const t = initTRPC
  .context<Context>()
  .create({
    // Never a stack trace in an answer, whatever NODE_ENV says.
    isDev: false,
    errorFormatter({ shape, error }) {
      const gatewayError = error.cause instanceof GatewayError ? error.cause : undefined;
      // The code follows the gateway's status wherever the error was thrown (a middleware, the context, before the body was read).
      const code = gatewayError ? trpcCodeOf(gatewayError) : shape.data.code;
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY[code],
        // An error that is not the gateway's says nothing about itself (it is logged with its cause instead).
        message: gatewayError?.message ?? (code === 'INTERNAL_SERVER_ERROR' ? 'The gateway failed to process the request.' : shape.message),
        data: {
          code,
          httpStatus: gatewayError?.status ?? shape.data.httpStatus,
          path: shape.data.path,
          gatewayCode: gatewayError?.code ?? null,
        },
      };
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;
export const baseProcedure = t.procedure;

/** The tRPC code of a gateway error: its code's own, or the one of the status it carries (a relayed provider 4xx). */
export function trpcCodeOf(gatewayError: GatewayError): TRPC_ERROR_CODE_KEY {
  const own = ERROR_TABLE[gatewayError.code];
  return own.status === gatewayError.status ? own.trpc : trpcCodeForStatus(gatewayError.status);
}

/**
 * Converts domain errors to TRPCError once, keeping the GatewayError as `cause` for compat to render.
 * tRPC wraps what a later middleware throws as INTERNAL_SERVER_ERROR with the GatewayError as its
 * cause: such a wrapper is replaced by one with the gateway error's own code.
 */
export function toTRPCError(error: unknown): TRPCError {
  const gatewayError = asGatewayError(error);
  const code = trpcCodeOf(gatewayError);
  if (error instanceof TRPCError && error.cause === gatewayError && error.code === code) return error;
  return new TRPCError({ code, message: gatewayError.message, cause: gatewayError });
}

/** Unwraps what tRPC wrapped: a GatewayError cause, an input validation failure, or anything else. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof TRPCError) {
    if (error.cause instanceof GatewayError) return error.cause;
    const issues = (error.cause as { issues?: unknown } | undefined)?.issues;
    if (error.code === 'BAD_REQUEST' && Array.isArray(issues)) return issuesToGatewayError(issues);
    if (error.code === 'BAD_REQUEST') return new GatewayError('INVALID_REQUEST', error.message);
    if (error.code === 'NOT_FOUND') return new GatewayError('NOT_FOUND', error.message);
    if (error.cause) return toGatewayError(error.cause);
  }
  return toGatewayError(error);
}

function issuesToGatewayError(issues: Array<{ path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message?: string }>): GatewayError {
  const issue = issues[0];
  const path = (issue?.path ?? []).map((segment) => (typeof segment === 'object' && segment !== null ? segment.key : segment));
  const param = issuePath(path);
  return new GatewayError('INVALID_REQUEST', `Invalid value for '${param || 'body'}': ${issue?.message ?? 'invalid'}`, {
    param: param || null,
  });
}

export const errorConversion = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});
