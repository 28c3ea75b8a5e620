import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { CrawlError } from '../errors.ts';
import type { SafeResolver } from './safe-resolver.ts';

export interface EgressProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  readonly url: string;
  /** Connections refused by the policy so far. */
  refusals(): number;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade'];

/**
 * A local forward proxy that every byte the browser sends goes through, connecting only with the
 * safe resolver's pinned lookup for the target's host and port. Chromium resolves names itself, so
 * checking a URL before it loads is not enough (the name can be rebound between our check and its
 * connect; a page can also open WebSockets, which request interception does not see). Behind this
 * proxy the browser never resolves anything: the proxy does, checks, and connects to the checked
 * address.
 */
export async function startEgressProxy(resolver: SafeResolver): Promise<EgressProxy> {
  const sockets = new Set<Socket | Duplex>();
  let refused = 0;
  const track = (s: Socket | Duplex) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };

  const checkTarget = async (host: string, port: number): Promise<void> => {
    const h = host.startsWith('[') ? host.slice(1, -1) : host;
    if (isIP(h)) resolver.checkLiteral(h, port);
    // names are checked by the pinned lookup at connect time
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('only absolute http:// URLs are proxied');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const port = Number(target.port) || 80;
    checkTarget(target.hostname, port).then(
      () => {
        const headers = { ...req.headers };
        for (const h of HOP_BY_HOP) delete headers[h];
        const upstream = httpRequest(
          { host: target.hostname.replace(/^\[|\]$/g, ''), port, path: target.pathname + target.search, method: req.method, headers, lookup: resolver.lookupFor(port) as never },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        upstream.on('error', (err) => fail(res, err));
        req.pipe(upstream);
      },
      (err: unknown) => fail(res, err),
    );
  });

  const fail = (res: ServerResponse, err: unknown) => {
    const policy = isRefusal(err);
    if (policy) refused++;
    if (!res.headersSent) res.writeHead(policy ? 403 : 502, { 'x-trawl-refused': policy ? '1' : '0' }).end();
    else res.destroy();
  };

  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    const [host, portText] = splitHostPort(req.url ?? '');
    const port = portText === '' ? 443 : Number(portText);
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const refuse = (err: unknown) => {
      if (isRefusal(err)) refused++;
      client.end(`HTTP/1.1 ${isRefusal(err) ? 403 : 502} Refused\r\n\r\n`);
    };
    checkTarget(host, port).then(() => {
      const upstream = connect({ host: host.replace(/^\[|\]$/g, ''), port, lookup: resolver.lookupFor(port) as never });
      track(upstream);
      let established = false;
      upstream.once('connect', () => {
        established = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (err) => (established ? client.destroy() : refuse(err)));
      client.on('error', () => upstream.destroy());
    }, refuse);
  });
  server.on('connection', track);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refusals: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function isRefusal(err: unknown): boolean {
  return err instanceof CrawlError && err.code === 'TRAWL_UNSAFE_ADDRESS';
}

function splitHostPort(authority: string): [string, string] {
  const i = authority.lastIndexOf(':');
  if (i === -1 || authority.endsWith(']')) return [authority, ''];
  return [authority.slice(0, i), authority.slice(i + 1)];
}
