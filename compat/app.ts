import { nextId } from '../server/ids.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { appRouter, createCaller } from '../routers/_app.js';
import { readCredentials } from '../server/auth/authenticate.js';
import { IpAllowlist, resolveClientAddress } from '../server/auth/ip-allowlist.js';
import { createContextInner, type Context } from '../server/context.js';
import { GatewayError } from '../server/errors.js';
import type { Services } from '../server/services.js';
import { asGatewayError, toTRPCError } from '../server/trpc.js';
import { isDatabaseReady } from '../db/client.js';
import { authorizeRequest } from '../server/auth/authorize.js';
import { renderError, type ErrorFamily } from './error-body.js';
import { buildOpenApiDocument } from './openapi.js';
import { jsonTextNestsDeeperThan, readJsonBody, readRawBody, type BodyLimits } from './read-body.js';
import { BodyBudget } from './body-budget.js';
import { ROUTES } from './routes.js';
import { writeAnswer } from './write-answer.js';
import { readMultipart, type MultipartBody, type MultipartLimits, type MultipartSpec } from './read-multipart.js';
import { serveDashboard } from './dashboard-static.js';
import { serveApiDocs } from './api-docs.js';
import { ANONYMOUS_TRPC_BODY_BYTES, presentsValidCredential } from './trpc-credentials.js';
import { sessionAccountAuth } from '../server/dashboard/session-auth.js';
import type { WebRequest } from '../server/context.js';
import type { TLSSocket } from 'node:tls';
import { readinessDetail } from '../server/providers/provider-health.js';
import type { RequestObservation } from '../server/observability/observation.js';

const EMPTY_FORM: MultipartBody = Object.freeze({ fields: {}, files: {} }) as MultipartBody;

/** The most procedure calls one `/trpc` batch request may carry. */
const TRPC_MAX_BATCH = 10;
const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta', 'x-gateway-strict', 'openai-organization', 'openai-project', 'range', 'if-range'];
/** The error shape of a request no route matched (a route sets its own family). */
function familyOfPath(path: string): ErrorFamily {
  return path.startsWith('/v1/messages') ? 'anthropic' : 'openai';
}

function isJsonRequest(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() === 'application/json';
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface AppState {
  /** Requests being answered; graceful shutdown waits for them. */
  inFlight: number;
  draining: boolean;
  /** Bytes of request bodies in memory, /v1 and /trpc alike (BODY_BUDGET_BYTES). */
  bodyBudget: BodyBudget;
}

/** Builds the Koa application: the compat surface, /trpc, /openapi.json and the probes. */
export function createApp(services: Services, state: AppState = { inFlight: 0, draining: false, bodyBudget: new BodyBudget(services.config.limits.bodyBudgetBytes) }): Koa {
  const app = new Koa({ proxy: false });
  const trusted = services.config.trustedProxies.length ? new IpAllowlist(services.config.trustedProxies) : null;
  const openApiJson = JSON.stringify(buildOpenApiDocument());
  const { limits } = services.config;
  const bodyLimits: BodyLimits = {
    maxBytes: services.config.bodyLimitBytes,
    idleTimeoutMs: limits.bodyIdleTimeoutMs,
    maxDepth: limits.maxJsonDepth,
    budget: state.bodyBudget,
  };
  const multipartLimits: MultipartLimits = { maxBytes: services.config.uploadLimitBytes, idleTimeoutMs: limits.bodyIdleTimeoutMs };

  function buildContext(ctx: Koa.Context, requestId: string, signal: AbortSignal, extra: { canStream: boolean; auth?: Context['auth'] }): Context {
    const req = ctx.req;
    const headers: Record<string, string | undefined> = {};
    for (const name of FORWARDED_HEADERS) headers[name] = header(req, name);
    return createContextInner(services, {
      requestId,
      clientAddress: clientAddressOf(ctx),
      credentials: credentialsOf(ctx),
      headers,
      signal,
      query: ctx.querystring,
      observation: ctx.state.observation as RequestObservation | undefined,
      ...extra,
    });
  }

  function clientAddressOf(ctx: Koa.Context): string {
    return resolveClientAddress(ctx.req.socket.remoteAddress ?? '', header(ctx.req, 'x-forwarded-for'), trusted);
  }

  /** The dashboard's view of the exchange: cookies in, cookies out, and whether the browser came over TLS. */
  function webOf(ctx: Koa.Context): WebRequest {
    const req = ctx.req;
    const viaTrustedProxy = trusted?.allows(req.socket.remoteAddress ?? '') ?? false;
    const forwardedProto = viaTrustedProxy ? header(req, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() : undefined;
    return {
      cookie: header(req, 'cookie'),
      csrfToken: header(req, 'x-csrf-token'),
      secure: (req.socket as TLSSocket).encrypted === true || forwardedProto === 'https',
      setCookie: (value) => ctx.res.appendHeader('set-cookie', value),
    };
  }

  function credentialsOf(ctx: Koa.Context) {
    return readCredentials(header(ctx.req, 'authorization'), header(ctx.req, 'x-api-key'));
  }

  // Errors first, so nothing ever reaches Koa's text/plain default handler.
  app.use(async (ctx, next) => {
    const requestId = header(ctx.req, 'x-request-id')?.slice(0, 128) || nextId('req_');
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    if (ctx.path.startsWith('/v1/messages')) ctx.set('request-id', requestId);
    state.inFlight++;
    try {
      await next();
    } catch (error) {
      const gatewayError = asGatewayError(error);
      ctx.state.errorCode = gatewayError.code;
      if (gatewayError.status >= 500) {
        services.log.error('request.failed', { requestId, path: ctx.path, code: gatewayError.code, message: gatewayError.message, cause: String((gatewayError.cause as Error)?.message ?? '') });
      }
      if (ctx.respond === false || ctx.res.headersSent) {
        if (!ctx.res.writableEnded) ctx.res.end();
        return;
      }
      const rendered = renderError((ctx.state.family as ErrorFamily | undefined) ?? familyOfPath(ctx.path), gatewayError, requestId);
      ctx.status = rendered.status;
      ctx.set(rendered.headers);
      ctx.body = rendered.body;
    } finally {
      state.inFlight--;
    }
  });

  // Request metrics, the server span and the access line, once the answer has ended.
  app.use(services.observability.middleware(clientAddressOf));

  app.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    services.log.error('koa.error', { message: error.message });
  });

  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const ready = !state.draining && (await isDatabaseReady(services.db));
    ctx.status = ready ? 200 : 503;
    // Cooled-down deployments are reported, never a reason to leave the load balancer: others may serve.
    ctx.body = { status: ready ? 'ready' : 'unavailable', ...readinessDetail(services.providerHealth) };
  });
  router.get('/metrics', (ctx) => services.observability.serveMetrics(ctx));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson;
  });
  // The API reference, rendered from /openapi.json.
  router.get('/docs', (ctx) => serveApiDocs(ctx));
  router.get('/docs/{*rest}', (ctx) => serveApiDocs(ctx));

  /**
   * A /trpc request's body, under /v1's bounds before tRPC or any procedure
   * sees it (the sign-in included): only JSON, read into the instance budget
   * until the answer ends, its size and pauses bounded (to 64 KiB without a
   * valid credential), its nesting too. A
   * batch wraps each input in one more object, so it may nest one level more.
   */
  async function readTrpcBody(ctx: Koa.Context): Promise<void> {
    const req = ctx.req as IncomingMessage & { body?: string };
    const maxDepth = bodyLimits.maxDepth + (ctx.query.batch === '1' ? 1 : 0);
    const tooDeep = () => new GatewayError('INVALID_REQUEST', `The input nests deeper than ${bodyLimits.maxDepth} levels.`);
    if (req.method === 'GET' || req.method === 'HEAD') {
      const input = new URLSearchParams(ctx.querystring).get('input');
      if (input && jsonTextNestsDeeperThan(input, maxDepth)) throw tooDeep();
      return;
    }
    // tRPC would read multipart and binary bodies itself, outside the budget; no procedure takes them.
    if (!isJsonRequest(req)) {
      req.resume();
      throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Expected an application/json body, got "${req.headers['content-type'] ?? ''}".`);
    }
    // Without a credential that holds (the sign-in, or anyone), only a small body: see ANONYMOUS_TRPC_BODY_BYTES.
    const credentialed = await presentsValidCredential(services, credentialsOf(ctx), header(req, 'cookie'));
    const limits = credentialed ? bodyLimits : { ...bodyLimits, maxBytes: Math.min(bodyLimits.maxBytes, ANONYMOUS_TRPC_BODY_BYTES) };
    const { raw, release } = await readRawBody(req, limits);
    ctx.res.once('close', release);
    if (jsonTextNestsDeeperThan(raw, maxDepth)) throw tooDeep();
    req.body = raw.toString('utf8');
  }

  // Typed tRPC clients (the admin CLI, the dashboard): every procedure, admin ones behind the admin token.
  router.all('/trpc/{*path}', async (ctx) => {
    ctx.respond = false;
    // Koa starts every answer at 404; tRPC only sets its own status over a 200.
    ctx.res.statusCode = 200;
    const requestId = ctx.state.requestId as string;
    const controller = new AbortController();
    const closed = new Promise<void>((resolve) => ctx.res.once('close', resolve));
    ctx.res.once('close', () => controller.abort());
    const handled = nodeHTTPRequestHandler({
      router: appRouter,
      req: ctx.req as IncomingMessage,
      res: ctx.res as ServerResponse,
      path: ctx.path.slice('/trpc/'.length),
      // The body is read here, before tRPC parses it; an error answers every call of the request.
      middleware: (req, _res, next) => {
        readTrpcBody(ctx).then(
          () => next(),
          (error: unknown) => {
            const gatewayError = asGatewayError(error);
            // tRPC must not read what is left of a refused body: it gets none.
            (req as IncomingMessage & { body?: string }).body = '';
            // A client that stalled is not kept on a connection it does not use.
            if (gatewayError.code === 'REQUEST_TIMEOUT' && !ctx.res.headersSent) ctx.res.setHeader('connection', 'close');
            next(toTRPCError(gatewayError));
          },
        );
      },
      // Plain HTTP cannot carry a stream: generation procedures answer JSON only here.
      createContext: () => ({ ...buildContext(ctx, requestId, controller.signal, { canStream: false }), web: webOf(ctx) }),
      // A batch is as many calls as a client may make in one request, no more.
      maxBatchSize: TRPC_MAX_BATCH,
      onError: ({ error, path }) => {
        // tRPC's own refusals (a parse error, a wrong method) have no gateway error and keep their status.
        const gatewayError = error.cause instanceof GatewayError ? error.cause : undefined;
        const status = gatewayError?.status ?? getHTTPStatusCodeFromError(error);
        ctx.state.errorCode = gatewayError?.code ?? error.code;
        // As on /v1: how long to wait before retrying a 429 or a 503 (tRPC writes its answer after this).
        if (gatewayError?.retryAfter !== undefined && !ctx.res.headersSent) ctx.res.setHeader('retry-after', String(gatewayError.retryAfter));
        if (status >= 500) {
          services.log.error('trpc.failed', { requestId, path: path ?? null, code: gatewayError?.code ?? error.code, message: error.message, cause: gatewayError?.cause ?? error.cause ?? error });
        }
      },
    });
    // tRPC resolves once the answer is written; a client gone before that ends the request too.
    await Promise.race([handled, closed]);
  });

  // The dashboard (dashboard/ built to dashboard/dist), and its video previews authorised by the session cookie.
  router.get('/dashboard/videos/:id/content', async (ctx) => {
    const controller = new AbortController();
    ctx.res.once('close', () => controller.abort());
    const base = { ...buildContext(ctx, ctx.state.requestId as string, controller.signal, { canStream: true }), web: webOf(ctx) };
    const auth = await sessionAccountAuth(base);
    const variant = ctx.query.variant === 'thumbnail' || ctx.query.variant === 'spritesheet' ? ctx.query.variant : 'video';
    const answer = await createCaller({ ...base, auth }).videos.content({ id: ctx.params.id!, variant });
    ctx.set('cache-control', 'private, no-store');
    await writeAnswer(ctx, answer, services.log);
  });
  router.get('/dashboard', (ctx) => serveDashboard(ctx));
  router.get('/dashboard/{*rest}', (ctx) => serveDashboard(ctx));

  /**
   * A route's multipart body. Its uploads live as long as the request, from
   * the first byte: removed, and their budget given back, when the answer
   * ends or the connection goes, whichever way the request ends.
   */
  async function readForm(ctx: Koa.Context, spec: MultipartSpec): Promise<MultipartBody> {
    const uploads = services.uploads.forRequest();
    ctx.res.once('close', () => {
      uploads.end().catch((error: Error) => services.log.error('uploads.release_failed', { requestId: ctx.state.requestId as string, message: error.message }));
    });
    try {
      return await readMultipart(ctx.req, spec, uploads, multipartLimits);
    } catch (error) {
      // A client that stalled is not kept on a connection it does not use.
      if (error instanceof GatewayError && error.code === 'REQUEST_TIMEOUT') ctx.set('connection', 'close');
      throw error;
    }
  }

  for (const route of ROUTES) {
    const handler = async (ctx: Koa.Context) => {
      ctx.state.family = route.family;
      const controller = new AbortController();
      ctx.res.once('close', () => {
        if (!ctx.res.writableFinished) controller.abort();
      });
      // What the headers can tell is checked before a byte of the body is read.
      const auth = route.auth === 'key' ? await services.observability.authorize(ctx.state.observation as RequestObservation | undefined, () => authorizeRequest(services, credentialsOf(ctx), clientAddressOf(ctx))) : undefined;
      // A check the route can make from the account alone (the free plan on image edits), before the body too.
      if (auth && route.guard) route.guard(auth);
      const bodyKind = route.body === 'multipart-or-json' ? (isJsonRequest(ctx.req) ? 'json' : 'multipart') : route.body;
      let body: Record<string, unknown> = {};
      if (bodyKind === 'json') {
        const read = await readJsonBody(ctx.req, bodyLimits);
        body = read.value;
        ctx.res.once('close', read.release);
      }
      const form = bodyKind === 'multipart' ? await readForm(ctx, route.multipart!) : EMPTY_FORM;
      const context = buildContext(ctx, ctx.state.requestId as string, controller.signal, { canStream: true, ...(auth ? { auth } : {}) });
      const caller = createCaller(context);
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(ctx.params ?? {})) params[name] = Array.isArray(value) ? value.join('/') : String(value);
      const answer = await route.invoke(caller, { body, params, query: ctx.query as Record<string, string>, form });
      await writeAnswer(ctx, answer, services.log);
    };
    if (route.method === 'GET') router.get(route.path, handler);
    else if (route.method === 'POST') router.post(route.path, handler);
    else router.delete(route.path, handler);
  }

  app.use(router.routes());

  // Unknown paths: 404; known paths with another method: 405 (both in the route family's shape).
  app.use(async (ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const known = ROUTES.filter((route) => routeMatches(route.path, ctx.path));
    if (known.length > 0) {
      ctx.set('allow', [...new Set(known.map((route) => route.method))].join(', '));
      // Koa's router matched no route (it matches the method too): label the 405 with the path's template, not `unmatched`.
      const observation = ctx.state.observation as RequestObservation | undefined;
      if (observation) observation.route = known[0]!.path;
      throw new GatewayError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}.`);
    }
    throw new GatewayError('NOT_FOUND', `No route ${ctx.method} ${ctx.path}.`);
  });

  return app;
}

function routeMatches(pattern: string, path: string): boolean {
  const expression = new RegExp(
    `^${pattern
      .replace(/[.]/g, '\\.')
      .replace(/\{\*\w+\}|\*\w+/g, '.+')
      .replace(/:\w+/g, '[^/]+')}/?$`,
  );
  return expression.test(path);
}
