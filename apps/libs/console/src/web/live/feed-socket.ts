/**
 * The WebSocket live feed (`/events`), reconnecting with backoff when the connection drops. After
 * a reconnect, or when the server says it dropped events for a slow client, `onGap` lets the view
 * re-read the job's status: the feed starts "about now" and does not replay what was missed.
 */
import { tokenUrl } from '../api.ts';

/**
 * A message of the WebSocket feed. The feed is not an HTTP answer, so it is not in the OpenAPI
 * document @trawl/client is generated from; its shape is the API README's ("Live feed").
 */
export type FeedMessage =
  | { type: 'hello'; user_id: string }
  | { type: 'dropped'; count: number }
  | { type: 'event'; event: string; job_id: string; topic: string; partition: number; offset: string; data: Record<string, unknown> };

export interface FeedOptions {
  readonly jobId?: string;
  readonly types?: readonly string[];
  readonly onEvent: (name: string, jobId: string, data: Record<string, unknown>) => void;
  readonly onGap?: () => void;
  readonly onState?: (state: 'connecting' | 'live' | 'offline') => void;
}

export class FeedSocket {
  private socket: WebSocket | undefined;
  private closed = false;
  private attempt = 0;
  private timer: number | undefined;

  constructor(private readonly options: FeedOptions) {
    this.connect();
  }

  private connect(): void {
    this.options.onState?.('connecting');
    const url = tokenUrl('/events', { job_id: this.options.jobId, types: this.options.types?.join(',') }, 'ws');
    const ws = new WebSocket(url);
    this.socket = ws;
    ws.onmessage = (m) => {
      const msg = JSON.parse(String(m.data)) as FeedMessage;
      if (msg.type === 'hello') {
        // Anything between the last event and now is unknown: have the view resync.
        if (this.attempt > 0) this.options.onGap?.();
        this.attempt = 0;
        this.options.onState?.('live');
      } else if (msg.type === 'dropped') {
        this.options.onGap?.();
      } else if (msg.type === 'event') {
        this.options.onEvent(msg.event, msg.job_id, msg.data);
      }
    };
    ws.onclose = () => {
      if (this.closed) return;
      this.options.onState?.('offline');
      const delay = Math.min(15_000, 500 * 2 ** this.attempt++);
      this.timer = window.setTimeout(() => this.connect(), delay);
    };
  }

  close(): void {
    this.closed = true;
    window.clearTimeout(this.timer);
    this.socket?.close();
  }
}
