/**
 * The WebSocket subscribers of the feed load test (test/load.test.ts), run as a child process so
 * that their work (200 sockets, JSON parsing) does not run on the API's event loop.
 *
 * Protocol over the IPC channel: the parent sends `start` (where to connect, who subscribes to
 * which job); the child answers `connected` once every socket has its hello. Normal subscribers
 * read everything; the slow one pauses its socket right after the hello (it never reads, so the
 * server's send buffer for it fills up) until the parent sends `drain`. `report` asks for every
 * subscriber's figures; `drain` resumes the slow one and reports once it has been quiet a moment.
 *
 * A PageFetched of the load test has `url` ending in `/<n>`: events of a job are numbered 0..N-1
 * in production order, so order and completeness are checked from the numbers.
 */
import { WebSocket } from 'ws';

export interface SubscriberSpec {
  readonly id: number;
  readonly key: string;
  readonly jobId: string;
  readonly slow?: boolean;
}

export interface StartMessage {
  readonly type: 'start';
  readonly wsBase: string;
  readonly subscribers: readonly SubscriberSpec[];
}

export interface SubscriberStats {
  readonly id: number;
  readonly jobId: string;
  readonly slow: boolean;
  /** Events of its job received. */
  received: number;
  /** The event numbers arrived strictly increasing, and every gap was announced by a `dropped` notice of its size. */
  ordered: boolean;
  /** The highest event number seen (-1: none). */
  last: number;
  /** Where the order first broke: expected and received event number, and events received before. */
  disorder: string | null;
  /** Sum of the counts of `dropped` notices. */
  droppedNotices: number;
  notices: number;
  /** Events of another job (must stay 0). */
  foreign: number;
  closeCode: number | null;
  /** Date.now() when the last event arrived. */
  lastAt: number;
  bytes: number;
}

export type ParentMessage = StartMessage | { readonly type: 'report' } | { readonly type: 'drain'; readonly quietMs: number } | { readonly type: 'exit' };
export type ChildMessage =
  | { readonly type: 'connected'; readonly ms: number }
  | { readonly type: 'report'; readonly stats: SubscriberStats[] }
  | { readonly type: 'drained'; readonly stats: SubscriberStats }
  | { readonly type: 'error'; readonly message: string };

interface FeedMessage {
  type: string;
  event?: string;
  job_id?: string;
  count?: number;
  data?: { url?: string };
}

const sockets = new Map<number, WebSocket>();
const stats = new Map<number, SubscriberStats>();

function send(message: ChildMessage): void {
  process.send!(message);
}

function track(spec: SubscriberSpec, ws: WebSocket, onHello: () => void): void {
  const s: SubscriberStats = {
    id: spec.id, jobId: spec.jobId, slow: spec.slow ?? false, received: 0, ordered: true, last: -1, disorder: null,
    droppedNotices: 0, notices: 0, foreign: 0, closeCode: null, lastAt: 0, bytes: 0,
  };
  stats.set(spec.id, s);
  let gap = 0;
  ws.on('message', (data: Buffer) => {
    s.bytes += data.length;
    const m = JSON.parse(data.toString('utf8')) as FeedMessage;
    if (m.type === 'hello') return onHello();
    if (m.type === 'dropped') {
      s.notices++;
      s.droppedNotices += m.count ?? 0;
      gap += m.count ?? 0;
      return;
    }
    if (m.type !== 'event') return;
    if (m.job_id !== spec.jobId) return void s.foreign++;
    if (m.event !== 'PageFetched') return;
    const n = Number(m.data?.url?.slice(m.data.url.lastIndexOf('/') + 1));
    // The next number must follow the last one, skipping exactly what a notice announced.
    if (n !== s.last + 1 + gap && s.ordered) {
      s.ordered = false;
      s.disorder = `expected ${s.last + 1 + gap}, got ${n} after ${s.received} events`;
    }
    gap = 0;
    s.last = n;
    s.received++;
    s.lastAt = Date.now();
  });
  ws.on('close', (code) => (s.closeCode = code));
}

async function connect(wsBase: string, spec: SubscriberSpec): Promise<void> {
  const ws = new WebSocket(`${wsBase}/events?job_id=${spec.jobId}`, { headers: { authorization: `Bearer ${spec.key}` } });
  sockets.set(spec.id, ws);
  await new Promise<void>((resolve, reject) => {
    track(spec, ws, () => {
      // The slow subscriber stops reading: nothing more leaves the kernel's receive buffer.
      if (spec.slow) ws.pause();
      resolve();
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`subscriber ${spec.id}: HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

process.on('message', (message: ParentMessage) => {
  void (async () => {
    try {
      if (message.type === 'start') {
        const started = Date.now();
        await Promise.all(message.subscribers.map((spec) => connect(message.wsBase, spec)));
        send({ type: 'connected', ms: Date.now() - started });
      } else if (message.type === 'report') {
        send({ type: 'report', stats: [...stats.values()].filter((s) => !s.slow) });
      } else if (message.type === 'drain') {
        const slow = [...stats.values()].find((s) => s.slow)!;
        sockets.get(slow.id)!.resume();
        // Quiet for quietMs (or closed): everything the server had buffered for it has arrived.
        let seen = -1;
        while (slow.closeCode === null && slow.bytes !== seen) {
          seen = slow.bytes;
          await new Promise((r) => setTimeout(r, message.quietMs));
        }
        send({ type: 'drained', stats: slow });
      } else if (message.type === 'exit') {
        for (const ws of sockets.values()) ws.terminate();
        process.exit(0);
      }
    } catch (err) {
      send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  })();
});

process.on('disconnect', () => process.exit(0));
