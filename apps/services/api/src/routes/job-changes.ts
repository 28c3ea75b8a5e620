/**
 * `GET /jobs/:id/changes`: what changed in a run of a schedule since the schedule's previous
 * finished run — pages new, changed, gone, unchanged (by content hash), items new, changed, removed
 * (by item key, page and position). The comparison is @trawl/changes' (pure, over projector-pg's
 * read models, nothing stored), so a rebuilt read model gives the same answer.
 */
import { ITEM_CHANGE_KINDS, jobChanges, PAGE_CHANGE_KINDS, type ItemChange, type PageChange } from '@trawl/changes';
import type { FastifyPluginAsync } from 'fastify';
import { findJob } from '../data/jobs.ts';
import { ApiError, notFound } from '../errors.ts';
import { jobChangesQuery } from '../schemas/changes.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';

/** The entries of each kind, `limit` of each at most, and their counts. */
function grouped<K extends string, T extends { readonly kind: K }>(kinds: readonly K[], entries: readonly T[], limit: number) {
  const counts = {} as Record<K, number>;
  const lists = {} as Record<K, Omit<T, 'kind'>[]>;
  let truncated = false;
  for (const kind of kinds) {
    counts[kind] = 0;
    lists[kind] = [];
  }
  for (const { kind, ...rest } of entries) {
    counts[kind]++;
    if (lists[kind].length < limit) lists[kind].push(rest);
    else truncated = true;
  }
  return { counts, lists, truncated };
}

const jobChangesRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get<{ Params: { id: string }; Querystring: { limit: number } }>(
    '/jobs/:id/changes',
    {
      schema: {
        tags: ['jobs'],
        summary: "A schedule's run against the schedule's previous finished run: pages new, changed, gone, unchanged; items new, changed, removed",
        description:
          "The previous run is the schedule's latest run that finished (not failed or cancelled) before this one started. Pages are compared by normalised URL and content hash (a job keeps hashes when it asks for `formats`); items by `item_key`, page and position. `page.changed` webhooks and the live feed's `PageChanged` events are decided by the same rules, for each `changed` page.",
        params: jobIdParams,
        querystring: jobChangesQuery,
        response: { 200: { $ref: 'JobChanges#' }, ...errorResponses('JOB_NOT_FOUND', 'JOB_NOT_SCHEDULED') },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      const answer = await jobChanges(fastify.db, id);
      // A job the read model has no row of yet is one the API accepted itself: never a schedule's.
      if (answer.kind !== 'changes') throw new ApiError('JOB_NOT_SCHEDULED', `job ${id} was not started by a schedule: there is no previous run to compare it with`);
      const c = answer.changes;
      const pages = grouped<PageChange['kind'], PageChange>(PAGE_CHANGE_KINDS, c.pages, request.query.limit);
      const items = grouped<ItemChange['kind'], ItemChange>(ITEM_CHANGE_KINDS, c.items, request.query.limit);
      return {
        job_id: c.job_id,
        schedule_id: c.schedule_id,
        status: c.status,
        previous_job_id: c.previous_job_id,
        settled: c.settled,
        waiting_for: c.waiting_for,
        pages: { counts: pages.counts, ...pages.lists },
        items: { counts: { ...items.counts, unchanged: c.items_unchanged }, ...items.lists },
        truncated: pages.truncated || items.truncated,
      };
    },
  );
};

export default jobChangesRoutes;
