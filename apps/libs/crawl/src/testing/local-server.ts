import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export interface LocalServer {
  readonly origin: string;
  readonly port: number;
  /** Paths requested, in order. */
  readonly hits: string[];
  /** TCP connections accepted (keep-alive checks). */
  connections(): number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 and a random port, for integration tests of the fetchers. */
export async function startLocalServer(routes: Record<string, Route>): Promise<LocalServer> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.push(path);
    const route = routes[path] ?? routes[path.split('?')[0]!];
    if (!route) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    route(req, res);
  });
  server.on('connection', (s: Socket) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
