import { initTRPC, TRPCError } from '@trpc/server';
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
      return {
        ...shape,
        data: {
          code: shape.data.code,
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

/** Converts domain errors to TRPCError once, keeping the GatewayError as `cause` for compat to render. */
export function toTRPCError(error: unknown): TRPCError {
  if (error instanceof TRPCError && error.cause instanceof GatewayError) return error;
  const gatewayError = asGatewayError(error);
  const own = ERROR_TABLE[gatewayError.code];
  const code = own.status === gatewayError.status ? own.trpc : trpcCodeForStatus(gatewayError.status);
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
