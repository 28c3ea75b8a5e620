/** A WebSocket client of the API's live feed (`GET /events`). */
import { WebSocket } from 'ws';
import type { ApiClient } from './api-client.ts';

export interface FeedConnection {
  onMessage(listener: (message: { type: string; [k: string]: unknown }) => void): void;
  readonly closed: Promise<void>;
  close(): void;
}

/** How long a feed the API answers 503 for (FEED_UNAVAILABLE: its subscription still joining Kafka) is tried again. */
const NOT_YET_MS = 10_000;

/**
 * The caller's live feed, from the server's hello on. Right after `trawl up` the API answers before
 * its own live subscription has joined Kafka (503, "retry shortly"): that answer is tried again
 * for NOT_YET_MS, every half second.
 */
export async function openFeed(api: ApiClient, query = ''): Promise<FeedConnection> {
  const deadline = Date.now() + NOT_YET_MS;
  for (;;) {
    try {
      return await connectFeed(api, query);
    } catch (err) {
      if (!(err instanceof FeedNotReadyError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

class FeedNotReadyError extends Error {}

function connectFeed(api: ApiClient, query: string): Promise<FeedConnection> {
  const ws = new WebSocket(`${api.baseUrl.replace(/^http/, 'ws')}/events${query}`, { headers: api.headers });
  const listeners: ((m: { type: string }) => void)[] = [];
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  ws.on('message', (data) => {
    let message: { type: string };
    try {
      message = JSON.parse(String(data));
    } catch {
      return;
    }
    for (const l of listeners) l(message);
  });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      const message = `the live feed answered HTTP ${res.statusCode}`;
      ws.terminate(); // the refused upgrade's socket, which ws leaves to whoever listens for this
      reject(res.statusCode === 503 ? new FeedNotReadyError(message) : new Error(message));
    });
    ws.once('error', reject);
    // Resolve on the server's hello: from then on the subscription is ours.
    listeners.push(function hello(m) {
      if (m.type !== 'hello') return;
      listeners.splice(listeners.indexOf(hello), 1);
      resolve({ onMessage: (l) => void listeners.push(l as never), closed, close: () => ws.terminate() });
    });
  });
}
