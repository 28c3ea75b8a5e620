import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import type { SafeResolver } from './safe-resolver.ts';

export interface PinnedConnectorOptions {
  /** Connect timeout (TCP and TLS handshake). */
  readonly timeout: number;
  /** Connectors kept, one per port seen; a crawl sees a handful (80, 443, a few odd ones). */
  readonly maxPorts?: number;
}

/**
 * undici's `connect` for the HTTP fetcher: every socket goes to an address the safe resolver checked
 * for that host *and port*. An IP literal is checked here (it never reaches a lookup); a name is
 * resolved, checked and pinned by `resolver.lookupFor(port)`. Since `net.connect` does not pass the
 * port to its lookup, there is one underlying connector per port (each with its TLS session cache),
 * built on first use and kept in a bounded map.
 */
export function pinnedConnector(resolver: SafeResolver, options: PinnedConnectorOptions): buildConnector.connector {
  const maxPorts = options.maxPorts ?? 256;
  const byPort = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number): buildConnector.connector => {
    let c = byPort.get(port);
    if (c) return c;
    if (byPort.size >= maxPorts) byPort.delete(byPort.keys().next().value!);
    c = buildConnector({ timeout: options.timeout, lookup: resolver.lookupFor(port) });
    byPort.set(port, c);
    return c;
  };
  return (opts, callback) => {
    const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
    if (isIP(opts.hostname)) {
      try {
        resolver.checkLiteral(opts.hostname, port);
      } catch (err) {
        callback(err as Error, null);
        return;
      }
    }
    connectorFor(port)(opts, callback);
  };
}
