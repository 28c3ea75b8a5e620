import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import {
  checkCadenceQuota,
  createScheduleWithinQuota,
  getSchedule,
  getTarget,
  listSchedules,
  setScheduleStatus,
  updateSchedule,
  type CrawlRequest,
  type OverlapPolicy,
  type Schedule,
} from '@trawl/store';
import { parseInterval, parseTimeZone } from '../crawl/interval.ts';
import type { RequestFields } from '../crawl/submit-crawl.ts';
import { listJobs } from '../data/jobs.ts';
import { resumeSchedule } from '../data/schedules.ts';
import { ApiError, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { toJobView } from '../http/job-view.ts';
import { nextRuns } from '../schedules/next-runs.ts';
import { cursorProperty, errorResponses, limitProperty } from '../schemas/common.ts';
import { SCHEDULE_ID_PATTERN, scheduleCreateBody, schedulePatchBody } from '../schemas/configuration.ts';
import { maskedOptions } from '../http/masked-options.ts';

/** How far in the past `schedule_at` may lie (clock skew, slow clients) before it is refused. */
const SCHEDULE_PAST_TOLERANCE_MS = 60_000;

interface PatchBody {
  readonly schedule_at?: string | null;
  readonly interval?: string | null;
  readonly time_zone?: string;
  readonly overlap?: OverlapPolicy;
  readonly dedupe?: boolean;
  readonly request?: RequestFields;
}

function toScheduleView(s: Schedule) {
  return {
    schedule_id: s.id,
    status: s.status,
    target_id: s.target_id,
    request: s.request ? maskedOptions(s.request) : s.request,
    cron: s.cron,
    interval_ms: s.interval_ms,
    run_at: s.run_at,
    time_zone: s.time_zone,
    overlap: s.overlap,
    dedupe: s.dedupe,
    last_scheduled: s.last_scheduled,
    last_job_id: s.last_job_id,
    next_run: s.status === 'active' ? s.next_due : null,
    next_runs: nextRuns(s),
    created_at: s.created_at,
    paused_reason: s.paused_reason ? { code: s.paused_reason, message: s.paused_message ?? '', at: s.paused_at } : null,
    skipped: s.skipped_reason ? { at: s.skipped_at, reason: s.skipped_reason } : null,
  };
}

const params = { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: SCHEDULE_ID_PATTERN } } } as const;
type Action = 'pause' | 'resume' | 'cancel';

const schedulesRoutes: FastifyPluginAsync = async (fastify) => {
  async function own(id: string, userId: string): Promise<Schedule> {
    const s = await getSchedule(fastify.db, id);
    if (!s || s.owner_id !== userId) throw notFound('SCHEDULE_NOT_FOUND', id);
    return s;
  }

  fastify.get(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: "The caller's schedules with their next runs",
        response: { 200: { type: 'object', required: ['schedules'], properties: { schedules: { type: 'array', items: { $ref: 'Schedule#' } } } }, ...errorResponses() },
      },
    },
    async (request) => ({ schedules: (await listSchedules(fastify.db, request.userId)).map(toScheduleView) }),
  );

  fastify.get<{ Params: { id: string } }>(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'One schedule',
        params,
        response: { 200: { $ref: 'Schedule#' }, ...errorResponses('SCHEDULE_NOT_FOUND') },
      },
    },
    async (request) => toScheduleView(await own(request.params.id, request.userId)),
  );

  fastify.post<{ Body: { target_id: string; schedule_at?: string; interval?: string; time_zone?: string; overlap?: OverlapPolicy } }>(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Schedule a target (crawls of start URLs are scheduled through POST /crawl)',
        body: scheduleCreateBody,
        response: { 201: { $ref: 'Schedule#' }, ...errorResponses('TARGET_NOT_FOUND', 'INVALID_CRON', 'INVALID_TIME_ZONE', 'INTERVAL_TOO_SHORT', 'SCHEDULE_IN_PAST', 'QUOTA_EXCEEDED') },
      },
    },
    async (request, reply) => {
      const { target_id, schedule_at, interval, time_zone, overlap } = request.body;
      const target = await getTarget(fastify.db, target_id);
      if (!target || target.owner_id !== request.userId) throw notFound('TARGET_NOT_FOUND', target_id);
      if (schedule_at === undefined && interval === undefined) {
        throw new ApiError('VALIDATION_FAILED', 'give schedule_at, interval or both', { field: 'interval' });
      }
      const runAt = schedule_at === undefined ? null : new Date(schedule_at);
      if (runAt && runAt.getTime() < Date.now() - SCHEDULE_PAST_TOLERANCE_MS) throw new ApiError('SCHEDULE_IN_PAST', `schedule_at ${schedule_at} is in the past`, { field: 'schedule_at' });
      const repeat = interval === undefined ? {} : parseInterval(interval);
      const timeZone = parseTimeZone(time_zone ?? 'UTC');
      const s = await createScheduleWithinQuota(
        fastify.db,
        { id: randomUUID(), owner_id: request.userId, target_id, cadence: { runAt, ...repeat, timeZone }, overlap: overlap ?? 'skip' },
        fastify.config.quotas,
      );
      return reply.code(201).send(toScheduleView(s));
    },
  );

  fastify.patch<{ Params: { id: string }; Body: PatchBody }>(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: "Change a schedule's cadence, time zone, overlap policy, dedupe or request; its next run moves to the new cadence",
        params,
        body: schedulePatchBody,
        response: {
          200: { $ref: 'Schedule#' },
          ...errorResponses('SCHEDULE_NOT_FOUND', 'SCHEDULE_NOT_ACTIVE', 'INVALID_CRON', 'INVALID_TIME_ZONE', 'INTERVAL_TOO_SHORT', 'SCHEDULE_IN_PAST', 'UNKNOWN_SPIDER', 'MISSING_PARAM', 'UNSUPPORTED_PATTERN', 'RETENTION_TOO_LONG', 'HEADER_NOT_ALLOWED', 'INVALID_HEADER', 'REQUEST_OPTIONS_TOO_LARGE', 'INVALID_LOCALE', 'INVALID_COOKIE', 'COOKIE_DOMAIN_NOT_CRAWLED', 'INVALID_PROXY', 'PROXY_NOT_ALLOWED', 'ACTIONS_TOO_MANY', 'INVALID_ACTION', 'UNSUPPORTED_SELECTOR'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      const body = request.body;
      const current = await own(id, request.userId);
      if (current.status === 'cancelled' || current.status === 'done') {
        throw new ApiError('SCHEDULE_NOT_ACTIVE', `cannot change schedule ${id}: it is ${current.status}`);
      }
      const now = new Date();
      let runAt = current.run_at;
      if (body.schedule_at !== undefined) {
        runAt = body.schedule_at === null ? null : new Date(body.schedule_at);
        if (runAt && runAt.getTime() < now.getTime() - SCHEDULE_PAST_TOLERANCE_MS) {
          throw new ApiError('SCHEDULE_IN_PAST', `schedule_at ${body.schedule_at} is in the past`, { field: 'schedule_at' });
        }
      }
      const repeat = body.interval === undefined ? { cron: current.cron, intervalMs: current.interval_ms } : body.interval === null ? { cron: null, intervalMs: null } : parseInterval(body.interval);
      if (!repeat.cron && !repeat.intervalMs) {
        if (!runAt) throw new ApiError('VALIDATION_FAILED', 'a schedule needs schedule_at, interval or both', { field: 'interval' });
        if (runAt.getTime() < now.getTime() - SCHEDULE_PAST_TOLERANCE_MS) {
          throw new ApiError('SCHEDULE_IN_PAST', 'a one-shot schedule needs a schedule_at in the future', { field: 'schedule_at' });
        }
      }
      const timeZone = body.time_zone === undefined ? current.time_zone : parseTimeZone(body.time_zone);
      let crawl: CrawlRequest | null = current.request;
      if (body.request) {
        if (current.target_id) throw new ApiError('BAD_REQUEST', `schedule ${id} crawls target ${current.target_id}: change the target instead`, { field: 'request' });
        crawl = (await fastify.crawls.checkedRequest(request.userId, body.request)).request;
      }
      if (body.dedupe === true && current.target_id) {
        throw new ApiError('BAD_REQUEST', `schedule ${id} crawls target ${current.target_id}: dedupe applies to schedules of start URLs`, { field: 'dedupe' });
      }
      const cadence = { runAt, ...repeat, timeZone };
      await checkCadenceQuota(fastify.db, request.userId, fastify.config.quotas, cadence);
      const updated = await updateSchedule(fastify.db, id, { cadence, request: crawl, overlap: body.overlap ?? current.overlap, dedupe: body.dedupe ?? current.dedupe }, now);
      if (!updated) throw new ApiError('SCHEDULE_NOT_ACTIVE', `cannot change schedule ${id}: it is no longer active or paused`);
      return toScheduleView(updated);
    },
  );

  fastify.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    '/schedules/:id/jobs',
    {
      schema: {
        tags: ['schedules'],
        summary: "The schedule's jobs, newest first (keyset-paged: pass `next_cursor` as `cursor`)",
        params,
        querystring: { type: 'object', additionalProperties: false, properties: { limit: limitProperty, cursor: cursorProperty } },
        response: {
          200: { type: 'object', required: ['jobs', 'next_cursor'], properties: { jobs: { type: 'array', items: { $ref: 'Job#' } }, next_cursor: { type: ['string', 'null'] } } },
          ...errorResponses('SCHEDULE_NOT_FOUND'),
        },
      },
    },
    async (request) => {
      const { id } = request.params;
      await own(id, request.userId);
      const after = decodeCursor(request.query.cursor);
      const rows = await listJobs(fastify.db, {
        userId: request.userId,
        scheduleId: id,
        limit: request.query.limit,
        ...(after ? { after: { sortAt: after.at, jobId: after.id } } : {}),
      });
      const last = rows[rows.length - 1];
      return { jobs: rows.map((r) => toJobView(r)), next_cursor: rows.length === request.query.limit && last ? encodeCursor(last.sort_at, last.job_id) : null };
    },
  );

  for (const action of ['pause', 'resume', 'cancel'] as const satisfies readonly Action[]) {
    fastify.post<{ Params: { id: string } }>(
      `/schedules/:id/${action}`,
      {
        schema: {
          tags: ['schedules'],
          summary: { pause: 'Pause a schedule', resume: 'Resume a paused schedule (repeating ones restart from now)', cancel: 'Cancel a schedule for good' }[action],
          params,
          response: { 200: { $ref: 'Schedule#' }, ...errorResponses('SCHEDULE_NOT_FOUND', 'SCHEDULE_NOT_ACTIVE', 'INTERVAL_TOO_SHORT') },
        },
      },
      async (request) => {
        const { id } = request.params;
        const current = await own(id, request.userId);
        const updated =
          action === 'resume'
            ? await resumeSchedule(fastify.db, id, request.userId, fastify.config.quotas)
            : action === 'pause' && current.status !== 'active'
              ? undefined
              : await setScheduleStatus(fastify.db, id, request.userId, action === 'pause' ? 'paused' : 'cancelled');
        if (!updated) throw new ApiError('SCHEDULE_NOT_ACTIVE', `cannot ${action} schedule ${id}: it is ${current.status}`);
        return toScheduleView(updated);
      },
    );
  }
};

export default schedulesRoutes;
