/**
 * A liveness signal for supervisors that cannot ask the service anything (a container's
 * healthcheck, before services have an operator port): while the event loop turns, the file at
 * TRAWL_HEARTBEAT_FILE is rewritten every few seconds with the time. A loop blocked by a runaway
 * page or pattern stops rewriting it, and the file's age says so. It proves the process is alive
 * and not stuck, nothing more: not that Kafka or Postgres answer.
 */
import { rename, writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';

export interface HeartbeatFileOptions {
  readonly file: string;
  /** How often the file is rewritten. Default 5 s. */
  readonly everyMs?: number;
  readonly logger: Logger;
}

export function startHeartbeatFile({ file, everyMs = 5_000, logger }: HeartbeatFileOptions): () => void {
  let warned = false;
  // Written beside and renamed over: a reader sees the last whole beat, never a file being rewritten.
  const next = `${file}.${process.pid}.tmp`;
  const beat = () =>
    writeFile(next, `${Date.now()}\n`).then(() => rename(next, file)).then(
      () => (warned = false),
      (err: unknown) => {
        if (!warned) logger.warn({ err, file }, 'heartbeat file not written');
        warned = true;
      },
    );
  void beat();
  const timer = setInterval(() => void beat(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
