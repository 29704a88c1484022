import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Context } from './context.js';
import { GatewayError, toGatewayError } from './errors.js';
import { issuePath } from './validation.js';

/** The only initTRPC of the project. */
const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta>()
  .create({
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

/** tRPC code per HTTP status (the inverse of tRPC's own status table). */
const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
};

/** Converts domain errors to TRPCError once, keeping the GatewayError as `cause` for compat to render. */
export function toTRPCError(error: unknown): TRPCError {
  const gatewayError = asGatewayError(error);
  const code = TRPC_CODE_BY_STATUS[gatewayError.status] ?? (gatewayError.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
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
