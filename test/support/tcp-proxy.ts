/**
 * A TCP proxy in front of a server the tests make disappear (PostgreSQL,
 * Redis): `stop()` closes the port and cuts every connection as a crash or
 * a network cut would, `start()` brings it back on the same port, and
 * `blackhole()` accepts connections but forwards nothing, the way a dead
 * host behind a firewall looks to a client (only timeouts end the wait).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The port clients connect to; the same across stop/start. */
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Closes the port and destroys every open connection. */
  stop(): Promise<void>;
  /** Forwards again, on the same port. */
  start(): Promise<void>;
  /** Cuts open connections; new ones are accepted and then left silent. */
  blackhole(): Promise<void>;
  /** Stops for good. */
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let mode: 'forward' | 'blackhole' = 'forward';
  let accepted = 0;
  let server: Server | undefined;
  let port = 0;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        accepted++;
        track(client);
        if (mode === 'blackhole') return;
        const upstream = createConnection(target.port, target.host);
        track(upstream);
        client.pipe(upstream);
        upstream.pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        const address = next.address();
        port = typeof address === 'object' && address ? address.port : port;
        server = next;
        resolve();
      });
    });

  const closeServer = () =>
    new Promise<void>((resolve) => {
      const current = server;
      server = undefined;
      if (!current) return resolve();
      current.close(() => resolve());
      cutAll();
    });

  await listen();
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    async stop() {
      await closeServer();
    },
    async start() {
      mode = 'forward';
      if (!server) await listen();
    },
    async blackhole() {
      mode = 'blackhole';
      cutAll();
      if (!server) await listen();
    },
    async close() {
      await closeServer();
    },
  };
}
