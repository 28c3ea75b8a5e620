/** Small network probes and the wait loop every part uses to decide that it is healthy. */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether something accepts TCP connections on host:port. */
export function tcpOpen(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface HttpRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

/**
 * One HTTP exchange on a connection of its own, closed afterwards, with a time limit. Not fetch:
 * its pooled keep-alive sockets would outlive the probe, and a server being stopped (ClickHouse)
 * waits for idle keep-alive connections before it exits. Network failures come back as status 0
 * with the reason.
 */
export function http(url: string, { method = 'GET', headers = {}, body, timeoutMs = 3_000 }: HttpRequest = {}): Promise<HttpAnswer> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      u,
      {
        method,
        agent: false,
        headers: { connection: 'close', ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ status: 0, body: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, body: err.code ?? err.message }));
    req.end(body);
  });
}

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Checked between attempts: when the process died there is no point in waiting on. */
  readonly alive?: () => boolean;
}

export type WaitOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: 'timeout' | 'exited'; readonly last: unknown };

/**
 * Calls `check` until it returns a value (not `undefined`), the process dies or time runs out.
 * A throwing check counts as "not yet"; its error is kept to explain a timeout.
 */
export async function waitFor<T>(check: () => Promise<T | undefined>, { timeoutMs, intervalMs = 250, alive }: WaitOptions): Promise<WaitOutcome<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return { ok: true, value };
    } catch (err) {
      last = err;
    }
    if (alive && !alive()) return { ok: false, reason: 'exited', last };
    if (Date.now() >= deadline) return { ok: false, reason: 'timeout', last };
    await sleep(intervalMs);
  }
}

/** Races a promise against a time limit, so one hung client cannot stall `status`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
