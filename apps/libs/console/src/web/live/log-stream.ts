/**
 * A job's log over Server-Sent Events. EventSource resumes by itself with Last-Event-ID after a
 * network blip (no gaps, no repeats, per the API); it is closed on `end`, or it would reconnect
 * to a finished stream forever.
 */
import { tokenUrl } from '../api.ts';

export interface LogLine {
  seq: number;
  ts: string;
  level: 'info' | 'warn' | 'error';
  msg: string;
  event: string | null;
}

export function followLog(jobId: string, onLine: (line: LogLine) => void, onEnd: (summary: Record<string, unknown>) => void): () => void {
  const source = new EventSource(tokenUrl(`/jobs/${encodeURIComponent(jobId)}/logs`));
  source.addEventListener('log', (e) => onLine(JSON.parse((e as MessageEvent<string>).data) as LogLine));
  source.addEventListener('end', (e) => {
    source.close();
    onEnd(JSON.parse((e as MessageEvent<string>).data) as Record<string, unknown>);
  });
  return () => source.close();
}
