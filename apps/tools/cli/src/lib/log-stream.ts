/**
 * Follows `GET /jobs/:id/logs` (SSE) to its `end`, reconnecting with Last-Event-ID when the
 * connection drops, so no line is lost or printed twice.
 */
import { TrawlApiError } from '@trawl/client';
import { ApiRequestError, type ApiClient } from './api-client.ts';
import { CliError } from './cli-error.ts';
import { SseParser } from './sse.ts';

export interface LogLine {
  readonly seq: number;
  readonly ts: string;
  readonly level: string;
  readonly msg: string;
  readonly event: string | null;
}

export interface LogEnd {
  /** Set instead of the job's outcome when the server ended the stream early (`key_revoked`). */
  readonly reason?: string;
  readonly status: string;
  readonly pages_fetched: number;
  readonly pages_failed: number;
  readonly items_extracted: number;
  readonly error: string | null;
}

export async function followLogs(api: ApiClient, jobId: string, onLine: (line: LogLine) => void, options: { signal?: AbortSignal; maxRetries?: number } = {}): Promise<LogEnd> {
  const parser = new SseParser();
  let failures = 0;
  for (;;) {
    try {
      const { data: body, error, response } = await api.http.GET('/jobs/{id}/logs', {
        params: { path: { id: jobId } },
        headers: { accept: 'text/event-stream', ...(parser.lastEventId ? { 'last-event-id': parser.lastEventId } : {}) },
        parseAs: 'stream',
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!response.ok || !body) throw ApiRequestError.of(TrawlApiError.of(response, error));
      const decoder = new TextDecoder();
      const reader = body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        failures = 0;
        for (const m of parser.push(decoder.decode(value, { stream: true }))) {
          if (m.event === 'log') onLine(JSON.parse(m.data) as LogLine);
          else if (m.event === 'end') {
            const end = JSON.parse(m.data) as LogEnd;
            if (end.reason === 'key_revoked') throw new CliError('the API key was revoked: the log stream was ended');
            if (end.reason !== undefined) throw new CliError(`the server ended the log stream: ${end.reason}`);
            return end;
          }
        }
      }
      throw new Error('the stream closed before its end event');
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (err instanceof ApiRequestError && err.status < 500) throw err;
      if (options.signal?.aborted) throw new CliError('interrupted');
      if (++failures > (options.maxRetries ?? 10)) throw new CliError(`lost the log stream: ${(err as Error).message}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** failures)));
  }
}
