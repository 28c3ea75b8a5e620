/**
 * What happens to jobs' sessions, said in the worker's log (with the job id) and counted in
 * metrics: logins, failed logins, sessions retired by a block and replaced, sessions resumed from
 * trawl.sessions (after a crash or a move). A retirement is also said in the job's own log: a note
 * on the job's next PageFetched from this worker (PageFetched.notes), which `GET /jobs/:id/status`
 * counts as `sessions_replaced`. Never a cookie or a credential: a reason is a rule or an error code.
 */
import { counterIn, defaultMetrics, type Logger } from '@trawl/streams';
import type { SessionEvent } from '@trawl/crawl';
import type { Registry } from 'prom-client';

/** The note a retirement leaves in the job's log; the API counts the lines that start so. */
export const SESSION_REPLACED_NOTE = 'session retired and replaced';

/** Notes kept per job until said, and jobs kept (the oldest forgotten first). */
const MAX_NOTES_PER_JOB = 20;
const MAX_JOBS = 10_000;

export interface SessionEvents {
  readonly onEvent: (event: SessionEvent) => void;
  /** At most `max` of the job's notes not said yet (the rest wait for its next page). */
  takeNotes(jobId: string, max: number): string[];
}

export function sessionEvents(logger: Logger, registry: Registry = defaultMetrics): SessionEvents {
  const counter = counterIn(registry, 'trawl_worker_sessions_total', 'Session changes: login (a session logged in), login_failed, retired (met a block; replaced by a fresh session in its slot), resumed (read back from trawl.sessions).', ['event']);
  const notes = new Map<string, string[]>();
  return {
    onEvent(event) {
      counter.inc({ event: event.kind });
      const fields = { job_id: event.jobId, session: event.session, generation: event.generation, reason: event.reason };
      if (event.kind === 'login_failed') logger.warn(fields, 'session login failed');
      else if (event.kind === 'retired') {
        logger.warn(fields, SESSION_REPLACED_NOTE);
        const list = notes.get(event.jobId) ?? [];
        notes.delete(event.jobId);
        if (list.length < MAX_NOTES_PER_JOB) list.push(`${SESSION_REPLACED_NOTE}: session ${event.session} met a block (${event.reason}), generation ${event.generation} took its place`);
        notes.set(event.jobId, list);
        if (notes.size > MAX_JOBS) notes.delete(notes.keys().next().value!);
      } else logger.info(fields, event.kind === 'login' ? 'session logged in' : 'session resumed');
    },
    takeNotes(jobId, max) {
      const list = notes.get(jobId);
      if (!list || max <= 0) return [];
      const said = list.splice(0, max);
      if (list.length === 0) notes.delete(jobId);
      return said;
    },
  };
}
