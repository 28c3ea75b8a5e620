import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AccessLog } from './access-log.ts';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface RunningServer {
  /** `http://127.0.0.1:<port>` (or the host it was bound to). */
  readonly origin: string;
  readonly port: number;
  readonly accessLog: AccessLog;
  /** Bytes written to every connection so far, headers included: what crossed the wire to clients. */
  bytesSent(): number;
  close(): Promise<void>;
}

/** Serve `handler` with plain node:http, logging every request; port 0 picks a free one. */
export async function serve(handler: Handler, options: { port?: number; host?: string } = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const accessLog = new AccessLog();
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const entry = {
      method: req.method ?? 'GET',
      path,
      host: req.headers.host ?? '',
      time: Date.now(),
      ifNoneMatch: req.headers['if-none-match'] ?? null,
      ifModifiedSince: req.headers['if-modified-since'] ?? null,
      status: 0,
      bytes: 0,
    };
    accessLog.record(entry);
    // One response at a time per connection (no pipelining from clients here): what the socket
    // wrote from now to the response's end is this response, headers included.
    const sentBefore = req.socket.bytesWritten;
    res.on('finish', () => {
      entry.status = res.statusCode;
      entry.bytes = req.socket.bytesWritten - sentBefore;
    });
    // A client that drops a big body mid-way is normal for a crawler test: never crash on it.
    res.on('error', () => undefined);
    let url: URL;
    try {
      url = new URL(path, `http://${req.headers.host ?? host}`);
    } catch {
      res.writeHead(400).end();
      return;
    }
    Promise.resolve(handler(req, res, url)).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  let closedBytes = 0;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => {
      closedBytes += s.bytesWritten;
      sockets.delete(s);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    accessLog,
    bytesSent: () => {
      let open = 0;
      for (const s of sockets) open += s.bytesWritten;
      return closedBytes + open;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  const buf = Buffer.from(body, 'utf8');
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(buf.length), ...headers }).end(buf);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
