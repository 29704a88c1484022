/**
 * The baseline of the bench: the least a Node process can do to proxy a request. A node:http
 * server forwards every request to the upstream through one undici Pool (keep-alive), streaming
 * the request body up and the response body down, and nothing else: no parsing, no auth, no
 * accounting.
 *
 *   node --import tsx bench/bare-proxy.ts --port 0 --upstream http://127.0.0.1:9000
 *
 * Prints `READY <port>` on stdout once listening. Binds 127.0.0.1 only.
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { pipeline } from 'node:stream';
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

const server = createServer((req, res) => {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  pool
    .request({
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      path: req.url ?? '/',
      headers: forwardable(req.headers) as Record<string, string | string[]>,
      body: hasBody ? req : undefined,
      signal: abort.signal,
    })
    .then(({ statusCode, headers, body }) => {
      res.writeHead(statusCode, forwardable(headers));
      pipeline(body, res, () => undefined);
    })
    .catch((error: Error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const text = JSON.stringify({ error: { message: `bare proxy: ${error.message}`, type: 'proxy_error' } });
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
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
