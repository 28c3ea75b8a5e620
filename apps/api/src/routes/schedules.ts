import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { createScheduleWithinQuota, getSchedule, getTarget, listSchedules, setScheduleStatus, type Schedule } from '@trawl/store';
import { parseInterval } from '../crawl/interval.ts';
import { resumeSchedule } from '../data/schedules.ts';
import { ApiError, notFound } from '../errors.ts';
import { nextRuns } from '../schedules/next-runs.ts';
import { errorResponses } from '../schemas/common.ts';
import { SCHEDULE_ID_PATTERN, scheduleCreateBody } from '../schemas/configuration.ts';

function toScheduleView(s: Schedule) {
  return {
    schedule_id: s.id,
    status: s.status,
    target_id: s.target_id,
    request: s.request,
    cron: s.cron,
    interval_ms: s.interval_ms,
    run_at: s.run_at,
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
        response: { 200: { type: 'object', properties: { schedules: { type: 'array', items: { $ref: 'Schedule#' } } } }, ...errorResponses() },
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

  fastify.post<{ Body: { target_id: string; schedule_at?: string; interval?: string } }>(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Schedule a target (crawls of start URLs are scheduled through POST /crawl)',
        body: scheduleCreateBody,
        response: { 201: { $ref: 'Schedule#' }, ...errorResponses('TARGET_NOT_FOUND', 'INVALID_CRON', 'INTERVAL_TOO_SHORT', 'SCHEDULE_IN_PAST', 'QUOTA_EXCEEDED') },
      },
    },
    async (request, reply) => {
      const { target_id, schedule_at, interval } = request.body;
      const target = await getTarget(fastify.db, target_id);
      if (!target || target.owner_id !== request.userId) throw notFound('TARGET_NOT_FOUND', target_id);
      if (schedule_at === undefined && interval === undefined) {
        throw new ApiError('VALIDATION_FAILED', 'give schedule_at, interval or both', { field: 'interval' });
      }
      const runAt = schedule_at === undefined ? null : new Date(schedule_at);
      if (runAt && runAt.getTime() < Date.now() - 60_000) throw new ApiError('SCHEDULE_IN_PAST', `schedule_at ${schedule_at} is in the past`, { field: 'schedule_at' });
      const repeat = interval === undefined ? {} : parseInterval(interval);
      const s = await createScheduleWithinQuota(fastify.db, { id: randomUUID(), owner_id: request.userId, target_id, cadence: { runAt, ...repeat } }, fastify.config.quotas);
      return reply.code(201).send(toScheduleView(s));
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
