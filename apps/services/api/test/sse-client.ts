/** A small SSE reader over a real socket, for tests. */
import http from 'node:http';

export interface SseMessage {
  readonly id?: string;
  readonly event: string;
  readonly data: unknown;
}

export interface SseStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Resolves with the next message (or undefined when the stream ended). */
  next(timeoutMs?: number): Promise<SseMessage | undefined>;
  close(): void;
  /** Everything until the server ends the stream. */
  rest(timeoutMs?: number): Promise<SseMessage[]>;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const queue: SseMessage[] = [];
      const waiters: ((m: SseMessage | undefined) => void)[] = [];
      let ended = false;
      let buffer = '';
      const push = (m: SseMessage | undefined) => {
        const w = waiters.shift();
        if (w) w(m);
        else if (m) queue.push(m);
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':') || line === '') continue;
            const [field, ...value] = line.split(':');
            const v = value.join(':').replace(/^ /, '');
            if (field === 'id') id = v;
            else if (field === 'event') event = v;
            else if (field === 'data') data.push(v);
          }
          if (data.length) push({ ...(id === undefined ? {} : { id }), event, data: JSON.parse(data.join('\n')) });
        }
      });
      res.on('end', () => {
        ended = true;
        while (waiters.length) waiters.shift()!(undefined);
      });
      const stream: SseStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        next(timeoutMs = 10_000) {
          const m = queue.shift();
          if (m || ended) return Promise.resolve(m);
          return new Promise((res2, rej) => {
            const waiter = (x: SseMessage | undefined) => {
              clearTimeout(timer);
              res2(x);
            };
            // A waiter that timed out must not swallow the next message.
            const timer = setTimeout(() => {
              waiters.splice(waiters.indexOf(waiter), 1);
              rej(new Error('no SSE message in time'));
            }, timeoutMs);
            waiters.push(waiter);
          });
        },
        close: () => req.destroy(),
        async rest(timeoutMs = 10_000) {
          const out: SseMessage[] = [];
          for (;;) {
            const m = await stream.next(timeoutMs);
            if (!m) return out;
            out.push(m);
          }
        },
      };
      resolve(stream);
    });
    req.on('error', reject);
  });
}
