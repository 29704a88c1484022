import { createTRPCClient, httpLink, TRPCClientError, type TRPCClient } from '@trpc/client';
import type { AppRouter } from '../../routers/_app.js';

/**
 * A browser's side of the dashboard over /trpc, without a browser: it keeps
 * the session cookie the gateway sets and sends the CSRF token on mutations,
 * as the page does. `withoutCsrf` and `cookie` let tests play an attacker.
 */
export interface DashboardSession {
  client: TRPCClient<AppRouter>;
  cookie: string | undefined;
  csrf: string | undefined;
  /** Every Set-Cookie header the gateway answered with. */
  setCookies: string[];
}

export function dashboardClient(url: string, options: { csrf?: 'send' | 'omit' | string; cookie?: string } = {}): DashboardSession {
  const state: DashboardSession = { client: undefined as unknown as TRPCClient<AppRouter>, cookie: options.cookie, csrf: undefined, setCookies: [] };
  state.client = createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${url}/trpc`,
        headers: ({ op }) => {
          const headers: Record<string, string> = {};
          if (state.cookie) headers.cookie = state.cookie;
          if (op.type === 'mutation') {
            if (op.path === 'dashboard.auth.login') headers['x-csrf-token'] = 'login';
            else if (options.csrf === undefined || options.csrf === 'send') {
              if (state.csrf) headers['x-csrf-token'] = state.csrf;
            } else if (options.csrf !== 'omit') headers['x-csrf-token'] = options.csrf;
          }
          return headers;
        },
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          for (const value of response.headers.getSetCookie()) {
            state.setCookies.push(value);
            const pair = value.split(';')[0]!;
            state.cookie = pair.endsWith('=') ? undefined : pair;
          }
          return response;
        },
      }),
    ],
  });
  return state;
}

/** Signs in and remembers the CSRF token. */
export async function signIn(url: string, email: string, password: string): Promise<DashboardSession> {
  const session = dashboardClient(url);
  const me = await session.client.dashboard.auth.login.mutate({ email, password });
  session.csrf = me.csrf_token;
  return session;
}

/** The gateway's error code of a failed call. */
export async function gatewayCodeOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError) return (error.data as { gatewayCode?: string } | undefined)?.gatewayCode ?? null;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** The admin token's client (for creating users). */
export function adminClient(url: string, adminToken: string): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${adminToken}` } })] });
}
