/**
 * `POST /jobs/:id/reextract {spec}`: a finished job's stored pages parsed again under new
 * extraction rules, as a new job that fetches nothing — how a user fixes a selector without
 * crawling the site again.
 *
 * The new job goes through the pipeline like any other (CrawlRequested + JobDispatched on
 * trawl.jobs, admitted within the quotas, deduplicated): its spec carries `reextract_of`, so the
 * frontier seeds it with the source job's fetched pages (and follows nothing) and the worker reads
 * each page's stored body from the content store instead of the network (CrawlSpec.reextract_of).
 * Its items, pages and log are those of any job; `GET /jobs/:new/changes` compares it with the
 * source job by default.
 *
 * Refused before anything is produced: a job that is not the caller's (404, as every job route), one
 * still running or whose pages are not all recorded yet (409 JOB_NOT_FINISHED: its page list is
 * what the frontier will read), one without any stored body (409 NOTHING_TO_REEXTRACT), rules that
 * a website would be refused (400: the same checks and bounds, check-selectors.ts, run on the spec
 * the new job will carry — selectors, XPath, transforms, the item schema compiled by Ajv).
 */
import type { FastifyPluginAsync } from 'fastify';
import { checkSelectors, normaliseItemFields } from '../crawl/check-selectors.ts';
import { reextractionSpec, reextractKey, type ReextractRules } from '../crawl/reextract-spec.ts';
import { findJob, isTerminal } from '../data/jobs.ts';
import { reextractSource } from '../data/reextract-source.ts';
import { ApiError, notFound } from '../errors.ts';
import { errorResponses, jobIdParams } from '../schemas/common.ts';
import { reextractBody, reextractResponse } from '../schemas/reextract.ts';

const jobReextractRoutes: FastifyPluginAsync = async (fastify) => {
  fastify.post<{ Params: { id: string }; Body: { spec: ReextractRules } }>(
    '/jobs/:id/reextract',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags: ['jobs'],
        summary: "A new job that parses a finished job's stored pages again under new extraction rules, without fetching any; its changes against the job at `changes_url`",
        description:
          "The source job's fetched pages are parsed again from the bodies it stored (it asked for `formats` or `store_in_cache`, or the HTTP cache holds the URL), at their depths, following no link: the site gets no request. A page without a stored body fails `TRAWL_NOT_STORED` in the new job. Rules left out of `spec` stay the source job's; those given (CSS or XPath items, transforms, an `item_schema`, the `metadata` format) are checked and bounded as a website's are. The crawl's request options (headers, cookies, proxies, sessions, login, actions) are not carried over. Counted in the quotas as a job of as many pages as the source fetched.",
        params: jobIdParams,
        body: reextractBody,
        response: {
          200: reextractResponse,
          ...errorResponses('JOB_NOT_FOUND', 'JOB_NOT_FINISHED', 'NOTHING_TO_REEXTRACT', 'UNSUPPORTED_SELECTOR', 'INVALID_TRANSFORM', 'INVALID_ITEM_SCHEMA', 'QUOTA_EXCEEDED'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const source = await reextractSource(fastify.db, id, request.userId);
      if (!source) {
        // Accepted by the API a moment ago and not projected yet: the caller's, but not finished.
        if (await findJob(fastify.db, id, request.userId)) throw new ApiError('JOB_NOT_FINISHED', `job ${id} has not started yet; re-extract it once it has ended`);
        throw notFound('JOB_NOT_FOUND', id);
      }
      if (!isTerminal(source.status)) throw new ApiError('JOB_NOT_FINISHED', `job ${id} is still ${source.status}; re-extract it once it has ended`);
      if (!source.spec || source.pages_recorded < source.pages_expected) {
        throw new ApiError('JOB_NOT_FINISHED', `job ${id} has ${source.pages_recorded} of its ${source.pages_expected} pages recorded so far; retry in a moment`);
      }
      if (source.pages_stored === 0) {
        throw new ApiError('NOTHING_TO_REEXTRACT', `none of the ${source.pages_fetched} pages job ${id} fetched has a stored body: crawl with \`formats\` or \`store_in_cache\` to re-extract later`);
      }
      const given = request.body.spec;
      // Fields as jobs carry them: CSS or XPath, with their transforms (check-selectors.ts).
      const rules = given.item_fields ? { ...given, item_fields: normaliseItemFields(given.item_fields, 'spec.') } : given;
      const sourceSpec = source.spec;
      // Checked as a website's selectors are, on the spec the job will run.
      checkSelectors(reextractionSpec(sourceSpec, id, rules, source.pages_fetched), 'spec.');
      const outcome = await fastify.crawls.reextract(
        request.userId,
        { job_id: id, spider: source.spider, start_urls: source.start_urls ?? [], params: source.params ?? {} },
        source.pages_fetched,
        reextractKey(rules),
        (maxPages) => reextractionSpec(sourceSpec, id, rules, maxPages),
      );
      if (outcome.scheduled) throw new Error('a re-extraction is never scheduled');
      return reply.code(200).send({
        ...outcome,
        reextract_of: id,
        pages: { fetched: source.pages_fetched, stored: source.pages_stored, not_stored: source.pages_fetched - source.pages_stored },
        status_url: `/jobs/${outcome.job_id}/status`,
        logs_url: `/jobs/${outcome.job_id}/logs`,
        changes_url: `/jobs/${outcome.job_id}/changes?against=${id}`,
      });
    },
  );
};

export default jobReextractRoutes;
