/**
 * What the SDK end-to-end suites (chat completions, messages, responses)
 * share: the two upstream test servers with a gateway whose catalog points at
 * them, a `fetch` for the official clients that keeps every answer's headers,
 * and the small readers of a failed call.
 */
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import type { GatewayConfig } from '../../server/config.js';
import { startAnthropicUpstream, type AnthropicUpstreamOptions } from '../upstreams/anthropic-upstream.js';
import { startOpenAIUpstream, type OpenAIUpstreamOptions } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/** Upstream timeouts and retries of the suites: small, so that faults resolve fast. */
export const FAST_UPSTREAM: GatewayConfig['upstream'] = {
  connectTimeoutMs: 2_000,
  firstByteTimeoutMs: 5_000,
  idleTimeoutMs: 5_000,
  maxRetries: 2,
  retryBaseDelayMs: 1,
};

/** A gateway in front of an OpenAI-format and an Anthropic-format upstream test server. */
export interface UpstreamWorld {
  gateway: TestGateway;
  openaiUpstream: UpstreamServer;
  anthropicUpstream: UpstreamServer;
  close(): Promise<void>;
}

/** Options of {@link startUpstreamWorld}. */
export interface UpstreamWorldOptions {
  openai?: OpenAIUpstreamOptions;
  anthropic?: AnthropicUpstreamOptions;
  /** The gateway's catalog, from the upstreams' base URLs (`/v1` included). */
  catalog(urls: { openai: string; anthropic: string }): CatalogFile;
  /** The gateway's environment: the provider keys its catalog names as `env:NAME`. */
  env?: Record<string, string>;
  /** The gateway's upstream timeouts and retries; {@link FAST_UPSTREAM} unless told. */
  upstream?: GatewayConfig['upstream'];
}

/** Both upstream test servers and a gateway whose catalog points at them; closes what it started if a part fails to start. */
export async function startUpstreamWorld(options: UpstreamWorldOptions): Promise<UpstreamWorld> {
  const started: UpstreamServer[] = [];
  try {
    const openaiUpstream = await startOpenAIUpstream(options.openai);
    started.push(openaiUpstream);
    const anthropicUpstream = await startAnthropicUpstream(options.anthropic);
    started.push(anthropicUpstream);
    const gateway = await startTestGateway({
      env: options.env,
      config: { upstream: options.upstream ?? FAST_UPSTREAM },
      catalog: options.catalog({ openai: openaiUpstream.url, anthropic: anthropicUpstream.url }),
    });
    return {
      gateway,
      openaiUpstream,
      anthropicUpstream,
      async close() {
        await gateway.close();
        await openaiUpstream.close();
        await anthropicUpstream.close();
      },
    };
  } catch (error) {
    await Promise.all(started.map((server) => server.close()));
    throw error;
  }
}

/** The `fetch` an SDK client is given. */
export type ClientFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** The headers of every answer a client got through {@link recordAnswers}' `fetch`. */
export interface AnswerRecorder {
  /** Give this to the SDK client as its `fetch`. */
  fetch: ClientFetch;
  /** Answer headers in arrival order (errors included). */
  answers: Headers[];
  /** Headers of the latest answer. */
  lastHeaders(): Headers;
  /** The gateway's request id of the latest answer. */
  lastRequestId(): string;
}

/**
 * A `fetch` that keeps every answer's headers. `requestIdHeader` names the
 * header the route family carries the request id in; `prepare` may rewrite a
 * request before it is sent (and look at it).
 */
export function recordAnswers(
  requestIdHeader: 'x-request-id' | 'request-id',
  prepare: (input: string | URL | Request, init: RequestInit | undefined) => RequestInit | undefined = (_input, init) => init,
): AnswerRecorder {
  const answers: Headers[] = [];
  const lastHeaders = (): Headers => {
    const headers = answers.at(-1);
    if (!headers) throw new Error('no answer yet');
    return headers;
  };
  return {
    answers,
    lastHeaders,
    lastRequestId() {
      const id = lastHeaders().get(requestIdHeader);
      if (!id) throw new Error(`the latest answer carried no ${requestIdHeader}`);
      return id;
    },
    async fetch(input, init) {
      const response = await fetch(input, prepare(input, init));
      answers.push(response.headers);
      return response;
    },
  };
}

/** The rejection of a call that must fail. */
export async function failureOf(call: Promise<unknown> | (() => Promise<unknown>)): Promise<unknown> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** Everything a client could read of an error: message and body. */
export function errorText(error: unknown): string {
  const apiError = error as { message?: string; error?: unknown };
  return `${apiError.message ?? String(error)} ${JSON.stringify(apiError.error ?? null)}`;
}
