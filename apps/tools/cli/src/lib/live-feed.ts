/** A WebSocket client of the API's live feed (`GET /events`). */
import { WebSocket } from 'ws';
import type { ApiClient } from './api-client.ts';

export interface FeedConnection {
  onMessage(listener: (message: { type: string; [k: string]: unknown }) => void): void;
  readonly closed: Promise<void>;
  close(): void;
}

export function openFeed(api: ApiClient, query = ''): Promise<FeedConnection> {
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
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the live feed answered HTTP ${res.statusCode}`)));
    ws.once('error', reject);
    // Resolve on the server's hello: from then on the subscription is ours.
    listeners.push(function hello(m) {
      if (m.type !== 'hello') return;
      listeners.splice(listeners.indexOf(hello), 1);
      resolve({ onMessage: (l) => void listeners.push(l as never), closed, close: () => ws.terminate() });
    });
  });
}
