/**
 * Upstream test server for the bench: speaks just enough of OpenAI's chat completions API
 * (JSON and SSE) for a gateway to proxy it. Run in its own process by bench/run.ts:
 *
 *   node --import tsx bench/upstream.ts --port 0 --chunks 20 --latency-ms 0 --chunk-delay-ms 0
 *
 * An answer has `--chunks` pieces of text (one SSE chunk each when streamed), or fewer if the request's
 * max_tokens is smaller. `--latency-ms` delays the answer's start, `--chunk-delay-ms` each chunk.
 * Prints `READY <port>` on stdout once listening. Binds 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    chunks: { type: 'string', default: '20' },
    'latency-ms': { type: 'string', default: '0' },
    'chunk-delay-ms': { type: 'string', default: '0' },
  },
});

const chunkCount = Math.max(1, Number(values.chunks));
const latencyMs = Math.max(0, Number(values['latency-ms']));
const chunkDelayMs = Math.max(0, Number(values['chunk-delay-ms']));
const MAX_BODY = 1024 * 1024;

const WORDS = ['Lorem', ' ipsum', ' dolor', ' sit', ' amet', ',', ' consectetur', ' adipiscing', ' elit', '.'];
const pieces = Array.from({ length: chunkCount }, (_, i) => WORDS[i % WORDS.length]!);
const fullText = pieces.join('');
let counter = 0;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (part: Buffer) => {
      size += part.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      parts.push(part);
    });
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

interface ChatRequest {
  model?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

/** Waits for the socket to drain when a write was buffered; gives up if the client left. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Answers have `--chunks` pieces, fewer when the request's max_tokens asks for less (finish_reason "length"). */
function answerLength(body: ChatRequest): number {
  const limit = typeof body.max_completion_tokens === 'number' ? body.max_completion_tokens : body.max_tokens;
  return typeof limit === 'number' && limit >= 1 ? Math.min(chunkCount, Math.floor(limit)) : chunkCount;
}

async function stream(res: ServerResponse, id: string, model: string, promptTokens: number, includeUsage: boolean, length: number): Promise<void> {
  const created = Math.floor(Date.now() / 1000);
  const frame = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let closed = false;
  res.on('close', () => (closed = true));
  const write = async (text: string) => {
    if (!res.write(text)) await drained(res);
  };
  await write(frame({ role: 'assistant', content: '' }, null));
  for (const piece of pieces.slice(0, length)) {
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
    else await nextTurn();
    if (closed) return;
    await write(frame({ content: piece }, null));
  }
  if (closed) return;
  await write(frame({}, length < chunkCount ? 'length' : 'stop'));
  if (includeUsage) {
    const usage = { prompt_tokens: promptTokens, completion_tokens: length, total_tokens: promptTokens + length };
    await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && (path === '/healthz' || path === '/v1/healthz')) return sendJson(res, 200, { ok: true });
  if (req.method === 'GET' && path === '/v1/models') {
    return sendJson(res, 200, { object: 'list', data: [{ id: 'bench-upstream', object: 'model', created: 0, owned_by: 'bench' }] });
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    return sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
  }
  const raw = await readBody(req);
  let body: ChatRequest;
  try {
    body = JSON.parse(raw.toString('utf8')) as ChatRequest;
  } catch {
    return sendJson(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
  }
  if (latencyMs > 0) await sleep(latencyMs);
  counter++;
  const id = `chatcmpl-bench-${counter}`;
  const model = typeof body.model === 'string' ? body.model : 'bench-upstream';
  const promptTokens = Math.max(1, Math.round(raw.length / 4));
  const length = answerLength(body);
  if (body.stream === true) return stream(res, id, model, promptTokens, body.stream_options?.include_usage === true, length);
  return sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: length === chunkCount ? fullText : pieces.slice(0, length).join('') }, finish_reason: length < chunkCount ? 'length' : 'stop', logprobs: null }],
    usage: { prompt_tokens: promptTokens, completion_tokens: length, total_tokens: promptTokens + length },
  });
}

const server = createServer((req, res) => {
  handle(req, res).catch((error: Error) => {
    if (!res.headersSent) sendJson(res, 500, { error: { message: error.message, type: 'server_error' } });
    else res.destroy();
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.maxConnections = 10_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`READY ${port}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
