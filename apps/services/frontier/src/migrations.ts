import type { Migration } from '@trawl/store';

/**
 * The frontier's own state, one row per job plus one per requested URL. URLs are rows rather
 * than a JSON set so that a batch writes only what changed: a 100,000-page job does not rewrite
 * its whole seen-set on every page.
 */
export const FRONTIER_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'frontier jobs and URLs',
    sql: `
      CREATE TABLE frontier_jobs (
        job_id text PRIMARY KEY,
        status text NOT NULL,
        spec jsonb,
        counters jsonb NOT NULL,
        started_at bigint,
        dispatch_event_id text,
        version bigint NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE frontier_urls (
        job_id text NOT NULL,
        fetch_id text NOT NULL,
        url text NOT NULL,
        depth int NOT NULL,
        done boolean NOT NULL DEFAULT false,
        PRIMARY KEY (job_id, fetch_id)
      );
      CREATE INDEX frontier_urls_outstanding ON frontier_urls (job_id) WHERE NOT done;
    `,
  },
  {
    id: 2,
    description: 'when each job last moved: the origin of the fetch deadline',
    sql: `
      ALTER TABLE frontier_jobs ADD COLUMN active_at bigint;
      -- A running job was last saved when it last moved, which is as precise as a deadline needs.
      UPDATE frontier_jobs SET active_at = (extract(epoch FROM updated_at) * 1000)::bigint WHERE status = 'running';
      CREATE INDEX frontier_jobs_silent ON frontier_jobs (active_at) WHERE status = 'running';
    `,
  },
  {
    id: 3,
    description: "each job's params, and pause: a paused job and the fetches it holds back",
    sql: `
      ALTER TABLE frontier_jobs ADD COLUMN params jsonb;
      ALTER TABLE frontier_jobs ADD COLUMN paused boolean NOT NULL DEFAULT false;
      -- A queued URL is seen but not yet requested: its FetchRequested goes out when the job resumes.
      ALTER TABLE frontier_urls ADD COLUMN queued boolean NOT NULL DEFAULT false;
      ALTER TABLE frontier_urls ADD COLUMN referrer text;
      DROP INDEX frontier_jobs_silent;
      CREATE INDEX frontier_jobs_silent ON frontier_jobs (active_at) WHERE status = 'running' AND NOT paused;
    `,
  },
  {
    id: 4,
    description: "each job's user: whose HTTP cache its fetch requests are looked up in",
    // Jobs saved before have none: their remaining requests go out without a cache entry.
    sql: `ALTER TABLE frontier_jobs ADD COLUMN user_id text;`,
  },
];
