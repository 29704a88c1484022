import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../../routers/_app.js';

/**
 * The dashboard speaks to the gateway only through its typed tRPC client, on
 * the same /trpc endpoint as every other caller. The session cookie goes by
 * itself (same origin, httpOnly); the CSRF token of the session, which the
 * page learns from `dashboard.auth.me`, goes in a header on every mutation.
 */
let csrfToken: string | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export const trpc = createTRPCClient<AppRouter>({
  links: [
    httpLink({
      url: '/trpc',
      headers: ({ op }) => {
        if (op.type !== 'mutation') return {};
        if (op.path === 'dashboard.auth.login') return { 'x-csrf-token': 'login' };
        return csrfToken ? { 'x-csrf-token': csrfToken } : {};
      },
    }),
  ],
});

/** A failed call's message and the gateway's code, for the page to show. */
export function describeError(error: unknown): { message: string; code: string | null } {
  if (error instanceof TRPCClientError) {
    const data = error.data as { gatewayCode?: string } | undefined;
    return { message: error.message, code: data?.gatewayCode ?? null };
  }
  return { message: error instanceof Error ? error.message : String(error), code: null };
}

export type Me = Awaited<ReturnType<typeof trpc.dashboard.auth.me.query>>;
