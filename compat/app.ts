import { nextId } from '../server/ids.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { appRouter, createCaller } from '../routers/_app.js';
import { readCredentials } from '../server/auth/authenticate.js';
import { IpAllowlist, resolveClientAddress } from '../server/auth/ip-allowlist.js';
import { createContextInner, type Context } from '../server/context.js';
import { GatewayError } from '../server/errors.js';
import type { Services } from '../server/services.js';
import { isStreamResult, RawJson, type StreamItem } from '../server/streaming.js';
import { asGatewayError } from '../server/trpc.js';
import { isDatabaseReady } from '../db/client.js';
import { renderError, renderStreamError, type ErrorFamily } from './error-body.js';
import { buildOpenApiDocument } from './openapi.js';
import { readJsonBody } from './read-body.js';
import { ROUTES, type CompatRoute, type StreamFormat } from './routes.js';
import { SseWriter, formatEvent } from './sse-writer.js';

const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta', 'x-gateway-strict', 'openai-organization', 'openai-project'];
const KEEPALIVE_MS = 10_000;

function familyOf(path: string): ErrorFamily {
  return path.startsWith('/v1/messages') ? 'anthropic' : 'openai';
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface AppState {
  /** Requests being answered; graceful shutdown waits for them. */
  inFlight: number;
  draining: boolean;
}

/** Builds the Koa application: the compat surface, /trpc, /openapi.json and the probes. */
export function createApp(services: Services, state: AppState = { inFlight: 0, draining: false }): Koa {
  const app = new Koa({ proxy: false });
  const trusted = services.config.trustedProxies.length ? new IpAllowlist(services.config.trustedProxies) : null;
  const openApiJson = JSON.stringify(buildOpenApiDocument());

  function buildContext(ctx: Koa.Context, requestId: string, signal: AbortSignal): Context {
    const req = ctx.req;
    const headers: Record<string, string | undefined> = {};
    for (const name of FORWARDED_HEADERS) headers[name] = header(req, name);
    const context = createContextInner(services, {
      requestId,
      clientAddress: resolveClientAddress(req.socket.remoteAddress ?? '', header(req, 'x-forwarded-for'), trusted),
      credentials: readCredentials(header(req, 'authorization'), header(req, 'x-api-key')),
      headers,
      signal,
      query: ctx.querystring,
    });
    return context;
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
      if (gatewayError.status >= 500) {
        services.log.error('request.failed', { requestId, path: ctx.path, code: gatewayError.code, message: gatewayError.message, cause: String((gatewayError.cause as Error)?.message ?? '') });
      }
      if (ctx.respond === false || ctx.res.headersSent) {
        if (!ctx.res.writableEnded) ctx.res.end();
        return;
      }
      const rendered = renderError(familyOf(ctx.path), gatewayError, requestId);
      ctx.status = rendered.status;
      ctx.set(rendered.headers);
      ctx.body = rendered.body;
    } finally {
      state.inFlight--;
    }
  });

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
    ctx.body = { status: ready ? 'ready' : 'unavailable' };
  });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson;
  });

  // Typed tRPC clients (the admin CLI): every procedure, admin ones behind the admin token.
  router.all('/trpc/{*path}', async (ctx) => {
    ctx.respond = false;
    // Koa starts every answer at 404; tRPC only sets its own status over a 200.
    ctx.res.statusCode = 200;
    const controller = new AbortController();
    ctx.res.once('close', () => controller.abort());
    await nodeHTTPRequestHandler({
      router: appRouter,
      req: ctx.req as IncomingMessage,
      res: ctx.res as ServerResponse,
      path: ctx.path.slice('/trpc/'.length),
      createContext: () => buildContext(ctx, ctx.state.requestId as string, controller.signal),
      maxBodySize: services.config.bodyLimitBytes,
    });
  });

  for (const route of ROUTES) {
    const handler = async (ctx: Koa.Context) => {
      const controller = new AbortController();
      ctx.res.once('close', () => {
        if (!ctx.res.writableFinished) controller.abort();
      });
      const body = route.body === 'json' ? (await readJsonBody(ctx.req, services.config.bodyLimitBytes)).value : {};
      const context = buildContext(ctx, ctx.state.requestId as string, controller.signal);
      const caller = createCaller(context);
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(ctx.params ?? {})) params[name] = Array.isArray(value) ? value.join('/') : String(value);
      const result = await route.invoke(caller, { body, params, query: ctx.query as Record<string, string> });
      ctx.set(context.responseHeaders);
      if (isStreamResult(result)) {
        await writeStream(ctx, route, result, context);
        return;
      }
      ctx.status = 200;
      if (result instanceof RawJson) {
        ctx.type = 'application/json';
        ctx.body = result.text;
      } else {
        ctx.body = result;
      }
    };
    if (route.method === 'GET') router.get(route.path, handler);
    else if (route.method === 'POST') router.post(route.path, handler);
    else router.delete(route.path, handler);
  }

  async function writeStream(ctx: Koa.Context, route: CompatRoute, stream: AsyncIterable<StreamItem>, context: Context): Promise<void> {
    const format: StreamFormat = route.streamFormat ?? 'chat';
    ctx.respond = false;
    const writer = new SseWriter(ctx.res);
    // The request ids and the procedure's headers are already set on the response (ctx.set); writeHead keeps them.
    writer.writeHead(200, {});
    let lastWrite = Date.now();
    const keepalive = setInterval(() => {
      if (Date.now() - lastWrite < KEEPALIVE_MS) return;
      lastWrite = Date.now();
      void writer.write(format === 'messages' ? formatEvent({ type: 'ping' }, 'ping') : ': keepalive\n\n');
    }, KEEPALIVE_MS / 2);
    const iterator = stream[Symbol.asyncIterator]();
    try {
      while (true) {
        const step = await iterator.next();
        if (step.done) break;
        const item = step.value;
        const open = await writer.write(item.kind === 'raw' ? item.bytes : formatEvent(item.data, item.event));
        lastWrite = Date.now();
        if (!open) break;
      }
    } catch (error) {
      const gatewayError = asGatewayError(error);
      services.log.warn('stream.failed', { requestId: context.requestId, code: gatewayError.code, message: gatewayError.message });
      const frame = renderStreamError(format, gatewayError);
      await writer.write(formatEvent(frame.data, frame.event));
    } finally {
      clearInterval(keepalive);
      if (writer.isClosed) await iterator.return?.(undefined);
      writer.end();
    }
  }

  app.use(router.routes());

  // Unknown paths: 404; known paths with another method: 405 (both in the route family's shape).
  app.use(async (ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const known = ROUTES.filter((route) => routeMatches(route.path, ctx.path));
    if (known.length > 0) {
      ctx.set('allow', [...new Set(known.map((route) => route.method))].join(', '));
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
