/**
 * The baseline of the bench: the fastest plain Node pass-through we know how to write, so that
 * the gateway's ratio to it is honest rather than flattering. A node:http server hands each
 * request to one keep-alive undici Pool with `stream()`: the upstream's body is written straight
 * into the node:http response (no Readable in between, no AbortSignal), the request body is
 * streamed up, and a client that goes away aborts the upstream request through the handler's
 * abort callback. No parsing, no auth, no accounting.
 *
 *   node --import tsx bench/bare-proxy.ts --port 0 --upstream http://127.0.0.1:9000
 *
 * Prints `READY <port>` on stdout once listening. Binds 127.0.0.1 only.
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    upstream: { type: 'string' },
  },
});
if (!values.upstream) throw new Error('--upstream http://127.0.0.1:PORT is required');
const upstream = new URL(values.upstream);

const pool = new Pool(upstream.origin, { keepAliveTimeout: 60_000, connections: null, pipelining: 1 });

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the connection's own; they are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function forwardable(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

function fail(res: ServerResponse, error: Error): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify({ error: { message: `bare proxy: ${error.message}`, type: 'proxy_error' } });
  res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  pool.stream(
    {
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      path: req.url ?? '/',
      headers: forwardable(req.headers) as Record<string, string | string[]>,
      body: hasBody ? req : undefined,
      opaque: res,
      // A client that leaves: undici's stream() destroys the upstream request when the
      // writable (the response) is destroyed, which node:http does on a closed socket.
    },
    ({ statusCode, headers, opaque }) => {
      const response = opaque as ServerResponse;
      response.writeHead(statusCode, forwardable(headers as Record<string, string | string[] | undefined>));
      return response;
    },
    (error) => {
      if (error) fail(res, error);
    },
  );
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`READY ${port}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.destroy().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
