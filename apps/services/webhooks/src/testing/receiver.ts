/**
 * A webhook receiver on 127.0.0.1, as a user would write one: it verifies every signature (with the
 * secret of the path's webhook), de-duplicates by `Idempotency-Key`, and can be made to fail
 * (`failing`), slow (`delayMs`), or taken down and brought back on the same port. For tests
 * (`@trawl/webhooks/testing`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DeliveryBody } from '../event-payload.ts';
import { verifySignature } from '../signature.ts';

export interface Received {
  readonly path: string;
  readonly body: DeliveryBody;
  readonly idempotencyKey: string;
  readonly validSignature: boolean;
  readonly at: number;
}

export class Receiver {
  /** Every request, duplicates included. */
  readonly all: Received[] = [];
  /** Paths that answer 500. */
  readonly failing = new Set<string>();
  /** How long each answer waits (a slow receiver keeps deliveries in flight). */
  delayMs = 0;
  private readonly secrets = new Map<string, string>();
  private server: Server | undefined;
  port = 0;

  url(path: string, secret: string): string {
    this.secrets.set(path, secret);
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** What a de-duplicating receiver keeps: the first of each idempotency key, by path. */
  unique(path: string): Received[] {
    const seen = new Set<string>();
    return this.all.filter((r) => r.path === path && !seen.has(r.idempotencyKey) && seen.add(r.idempotencyKey));
  }

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        const secret = this.secrets.get(path) ?? '';
        this.all.push({
          path,
          body: JSON.parse(raw) as DeliveryBody,
          idempotencyKey: String(req.headers['idempotency-key']),
          validSignature: verifySignature(secret, req.headers['x-trawl-signature'] as string | undefined, raw),
          at: Date.now(),
        });
        res.statusCode = this.failing.has(path) ? 500 : 204;
        setTimeout(() => res.end(), this.delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
