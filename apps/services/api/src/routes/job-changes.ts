/**
 * `GET /jobs/:id/changes`: what changed in a run of a schedule since the schedule's previous
 * finished run — or in a re-extraction against the job it parsed again, or in any job against the
 * job `against` names (the caller's) — pages new, changed, gone, unchanged (by content hash), items new, changed, removed
 * (by item key, page and position). The comparison is @trawl/changes' (pure, over projector-pg's
 * read models, nothing stored), so a rebuilt read model gives the same answer. It reads the runs in
 * batches and keeps only what it lists (`limit` entries and 4 MiB per kind), so a request costs the
 * API the same memory whatever the runs' size.
 */
import { jobChanges } from '@trawl/changes';
import type { FastifyPluginAsync } from 'fastify';
import { findJob, ownedJobIds } from '../data/jobs.ts';
import { ApiError, notFound } from '../errors.ts';
import { jobChangesQuery } from '../schemas/changes.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { StreamSlots } from '../limits/stream-slots.ts';

/** Change listings running at once per user, and per API instance (a quarter of its 20 pooled connections). */
const LISTINGS_PER_USER = 2;
const LISTINGS_PER_INSTANCE = 5;
const listingsPerUser = new StreamSlots(LISTINGS_PER_USER);
const listingsPerInstance = new StreamSlots(LISTINGS_PER_INSTANCE);

/** A kind's entries as the answer lists them (the kind is the list's name). */
function withoutKind<K extends string, T extends { readonly kind: K }>(lists: Readonly<Record<K, readonly T[]>>): Record<K, Omit<T, 'kind'>[]> {
  const out = {} as Record<K, Omit<T, 'kind'>[]>;
  for (const kind of Object.keys(lists) as K[]) out[kind] = lists[kind].map(({ kind: _kind, ...rest }) => rest);
  return out;
}

const jobChangesRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.get<{ Params: { id: string }; Querystring: { limit: number; against?: string } }>(
    '/jobs/:id/changes',
    {
      schema: {
        tags: ['jobs'],
        summary: "A job against another: a schedule's run against its previous finished run, a re-extraction against its source, any job against `against`; pages new, changed, gone, unchanged; items new, changed, removed",
        description:
          "The job compared with is `against` when given (any job of yours), else the job a re-extraction (`POST /jobs/{id}/reextract`) parsed again, else the schedule's latest run that finished (not failed or cancelled) before this one started. Pages are compared by normalised URL and content hash (a job keeps hashes when it asks for `formats`); items by `item_key`, page and position. `page.changed` webhooks and the live feed's `PageChanged` events are decided by the same rules, for each `changed` page.",
        params: jobIdParams,
        querystring: jobChangesQuery,
        response: { 200: { $ref: 'JobChanges#' }, ...errorResponses('JOB_NOT_FOUND', 'JOB_NOT_SCHEDULED', 'JOB_NOT_FINISHED') },
      },
    },
    async (request) => {
      const { id } = request.params;
      const { against } = request.query;
      if (!(await findJob(fastify.db, id, request.userId))) throw notFound('JOB_NOT_FOUND', id);
      // The job compared with is the caller's too: another user's is unknown here, as everywhere.
      if (against !== undefined && !(await ownedJobIds(fastify.db, [against], request.userId)).has(against)) throw notFound('JOB_NOT_FOUND', against);
      // A listing holds a pooled connection in one snapshot for as long as it reads both runs: a
      // user may run LISTINGS_PER_USER at once, an instance LISTINGS_PER_INSTANCE, so that listings
      // of large runs never take the pool other requests need.
      const mine = listingsPerUser.acquire(request.userId);
      if (!mine) throw new ApiError('RATE_LIMITED', `at most ${LISTINGS_PER_USER} change listings of one user run at once; retry when one has answered`);
      const ours = listingsPerInstance.acquire('*');
      if (!ours) {
        mine();
        throw new ApiError('RATE_LIMITED', `at most ${LISTINGS_PER_INSTANCE} change listings run at once on this API instance; retry shortly`);
      }
      let answer: Awaited<ReturnType<typeof jobChanges>>;
      try {
        answer = await jobChanges(fastify.db, id, { limit: request.query.limit, ...(against !== undefined ? { against } : {}) });
      } finally {
        mine();
        ours();
      }
      // The job named is the caller's (checked above) but not projected yet: nothing to compare with so far.
      if (answer.kind === 'against_not_found') throw new ApiError('JOB_NOT_FINISHED', `job ${against ?? ''} has not started yet: compare with it once it has run`);
      // A job the read model has no row of yet is one the API accepted itself: never a schedule's.
      if (answer.kind !== 'changes') throw new ApiError('JOB_NOT_SCHEDULED', `job ${id} was not started by a schedule: there is no previous run to compare it with`);
      const c = answer.changes;
      return {
        job_id: c.job_id,
        schedule_id: c.schedule_id,
        status: c.status,
        previous_job_id: c.previous_job_id,
        settled: c.settled,
        waiting_for: c.waiting_for,
        pages: { counts: c.pages.counts, ...withoutKind(c.pages.lists) },
        items: { counts: { ...c.items.counts, unchanged: c.items_unchanged }, ...withoutKind(c.items.lists) },
        truncated: c.truncated,
      };
    },
  );
};

export default jobChangesRoutes;
