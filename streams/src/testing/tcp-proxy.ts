/**
 * A TCP proxy that tests can cut and restore, to take an outside part (Postgres, say) away
 * from the code under test without touching the real server other processes share. Cutting
 * destroys every open connection and refuses new ones, as a crashed server would.
 */
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Closes every connection and stops listening. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** The two ends of a proxied connection, held in `sockets`: either one failing or closing closes both and takes them out. */
export function pairSockets(client: net.Socket, upstream: net.Socket, sockets: Set<net.Socket>): void {
  sockets.add(client).add(upstream);
  const drop = () => {
    client.destroy();
    upstream.destroy();
    sockets.delete(client);
    sockets.delete(upstream);
  };
  client.on('error', drop).on('close', drop);
  upstream.on('error', drop).on('close', drop);
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const makeServer = () =>
    net.createServer((client) => {
      const upstream = net.connect(target);
      pairSockets(client, upstream, sockets);
      client.pipe(upstream).pipe(client);
    });
  let server = makeServer();
  const listen = (port: number) => new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
  const port = await listen(0);
  let up = true;
  const stop = async () => {
    if (!up) return;
    up = false;
    for (const s of sockets) s.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    cut: stop,
    restore: async () => {
      if (up) return;
      server = makeServer();
      await listen(port);
      up = true;
    },
    close: stop,
  };
}
