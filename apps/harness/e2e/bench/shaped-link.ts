/**
 * The link between the crawler and a site, for the recrawl bench: a TCP proxy in front of the local
 * test site that gives the site's answers a bandwidth — one queue shared by every connection, as a
 * site's uplink — and a one-way delay in each direction. Without it the local site answers as fast
 * as the machine parses, which no real site does, and what a 304 saves (the transfer) cannot show.
 *
 * What it does not model: loss, TCP's slow start, and the delay of opening a connection (the
 * crawler keeps its connections alive, so that one is paid once per connection). Requests go
 * upstream after the delay, unshaped (they are a few hundred bytes).
 */
import net from 'node:net';
import { pairSockets } from '@trawl/streams/testing';

export interface LinkShape {
  /** The site's uplink, in Mbit/s. */
  readonly mbit: number;
  /** One-way delay, ms (the round trip is twice this). */
  readonly delayMs: number;
}

export interface ShapedLink {
  /** `http://127.0.0.1:<port>`: the site, through the link. */
  readonly origin: string;
  close(): Promise<void>;
}

/** Unsent bytes one connection may hold before its upstream is paused. */
const HIGH_WATER = 256 * 1024;

export async function startShapedLink(target: { host: string; port: number }, shape: LinkShape): Promise<ShapedLink> {
  const msPerByte = 8 / (shape.mbit * 1000);
  let linkFreeAt = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    pairSockets(client, upstream, sockets);
    client.on('data', (chunk: Buffer) => setTimeout(() => upstream.write(chunk), shape.delayMs));
    client.on('end', () => setTimeout(() => upstream.end(), shape.delayMs));
    // Each chunk leaves when the shared link is free and has carried it, and arrives a delay later.
    let queued = 0;
    let lastArrival = 0;
    upstream.on('data', (chunk: Buffer) => {
      const now = performance.now();
      linkFreeAt = Math.max(linkFreeAt, now) + chunk.length * msPerByte;
      lastArrival = linkFreeAt + shape.delayMs;
      queued += chunk.length;
      if (queued > HIGH_WATER) upstream.pause();
      setTimeout(() => {
        client.write(chunk);
        queued -= chunk.length;
        if (queued <= HIGH_WATER && upstream.isPaused()) upstream.resume();
      }, lastArrival - now);
    });
    upstream.on('end', () => setTimeout(() => client.end(), Math.max(0, lastArrival - performance.now())));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
