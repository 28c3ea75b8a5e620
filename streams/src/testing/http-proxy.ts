/**
 * An HTTP proxy that tests can switch to answering 404 for everything, to play a schema registry
 * that is up but does not know what it is asked (restored empty, reached through a wrong URL path,
 * a proxy in front of it during a deploy) without touching the real registry other processes
 * share. In `pass` mode it forwards requests and answers as they are.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type HttpProxyMode = 'pass' | 'not-found';

export interface HttpProxy {
  readonly port: number;
  /** `target` with its origin replaced by the proxy's (its path kept). */
  readonly url: string;
  mode: HttpProxyMode;
  /** Requests answered 404 so far. */
  readonly notFound: number;
  close(): Promise<void>;
}

/** Proxies to `target` (a URL: its origin, and its path as the prefix of what is asked). */
export async function startHttpProxy(target: string): Promise<HttpProxy> {
  const upstream = new URL(target);
  let notFound = 0;
  const state = { mode: 'pass' as HttpProxyMode };
  const server = http.createServer((req, res) => {
    if (state.mode === 'not-found') {
      notFound += 1;
      req.resume();
      const body = JSON.stringify({ error_code: 40403, message: `${req.method} ${req.url}: not found` });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    const forward = http.request(
      { hostname: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    port,
    url: url.toString().replace(/\/$/, ''),
    get mode() {
      return state.mode;
    },
    set mode(mode: HttpProxyMode) {
      state.mode = mode;
    },
    get notFound() {
      return notFound;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
