/**
 * The read-model tables of the running projection version (see READ-MODEL.md). A function of the table
 * names, so a replay creates its shadow set with the very DDL of the version it builds.
 */
import { ident, type TableSet } from './tables.ts';

/** Tables without keys or indexes: a replay loads them bare and adds keyDdl() and indexDdl() once loaded. */
export function tableDdl(t: TableSet): string {
  const jobs = ident(t.jobs);
  const pages = ident(t.pages);
  const items = ident(t.items);
  const log = ident(t.log);
  const cache = ident(t.cache);
  return `
    CREATE TABLE ${jobs} (
      job_id text NOT NULL,
      user_id text,
      schedule_id text,
      target_id text,
      website_id text,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'finished', 'failed', 'cancelled')),
      spider text,
      start_urls jsonb NOT NULL DEFAULT '[]',
      search_url text,
      params jsonb NOT NULL DEFAULT '{}',
      spec jsonb,
      max_depth int,
      max_pages int,
      dedupe_key text,
      attempt int NOT NULL DEFAULT 0,
      requested_at timestamptz,
      dispatched_at timestamptz,
      first_page_at timestamptz,
      finished_at timestamptz,
      completed_at timestamptz,
      outcome text,
      failed_at timestamptz,
      cancelled_at timestamptz,
      cancel_reason text,
      paused_at timestamptz,
      resumed_at timestamptz,
      retry_of text,
      pages_fetched int NOT NULL DEFAULT 0,
      pages_failed int NOT NULL DEFAULT 0,
      items_extracted int NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0,
      urls_seen int NOT NULL DEFAULT 0,
      completed_urls_seen int,
      pages_blocked int NOT NULL DEFAULT 0,
      duplicates int NOT NULL DEFAULT 0,
      sessions_replaced int NOT NULL DEFAULT 0,
      items_invalid int NOT NULL DEFAULT 0,
      error_code text,
      error text,
      error_event_id text,
      log_seq int NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL
    );

    CREATE TABLE ${pages} (
      job_id text NOT NULL,
      fetch_id text NOT NULL,
      url text NOT NULL,
      final_url text,
      status int,
      content_type text,
      bytes bigint NOT NULL DEFAULT 0,
      fetch_ms int,
      depth int NOT NULL,
      render_mode text NOT NULL,
      links_count int NOT NULL DEFAULT 0,
      item_count int NOT NULL DEFAULT 0,
      ok boolean NOT NULL,
      truncated boolean NOT NULL DEFAULT false,
      error_code text,
      error_message text,
      attempts int NOT NULL DEFAULT 1,
      fetched_at timestamptz NOT NULL,
      event_id text NOT NULL,
      content_hash text,
      formats jsonb NOT NULL DEFAULT '[]',
      downloads jsonb NOT NULL DEFAULT '[]',
      etag text,
      last_modified text,
      from_cache text CHECK (from_cache IN ('not_modified', 'max_age'))
    );

    CREATE TABLE ${items} (
      job_id text NOT NULL,
      item_key text NOT NULL,
      fetch_id text NOT NULL,
      url text NOT NULL,
      fields jsonb NOT NULL,
      extracted_at timestamptz NOT NULL,
      event_id text NOT NULL,
      errors jsonb NOT NULL DEFAULT '[]'
    );

    CREATE TABLE ${log} (
      job_id text NOT NULL,
      seq int NOT NULL,
      ts timestamptz NOT NULL,
      level text NOT NULL CHECK (level IN ('info', 'warn', 'error')),
      msg text NOT NULL,
      event text NOT NULL,
      event_id text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}'
    );

    CREATE TABLE ${cache} (
      user_id text NOT NULL,
      url text NOT NULL,
      final_url text NOT NULL,
      status int NOT NULL,
      content_type text,
      etag text,
      last_modified text,
      content_hash text NOT NULL,
      fetched_at timestamptz NOT NULL,
      job_id text NOT NULL,
      fetch_id text NOT NULL,
      event_id text NOT NULL
    );
  `;
}

/** The unique keys the projector's upserts and event-id dedupe rely on. */
export function keyDdl(t: TableSet): string {
  return `
    ALTER TABLE ${ident(t.jobs)} ADD PRIMARY KEY (job_id);
    ALTER TABLE ${ident(t.pages)} ADD PRIMARY KEY (job_id, fetch_id);
    ALTER TABLE ${ident(t.items)} ADD PRIMARY KEY (job_id, item_key);
    ALTER TABLE ${ident(t.log)} ADD PRIMARY KEY (job_id, seq), ADD UNIQUE (event_id);
    ALTER TABLE ${ident(t.cache)} ADD PRIMARY KEY (user_id, url);
  `;
}

/**
 * Secondary indexes for the API's reads. Kept apart so a replay loads its shadow tables first and
 * indexes them once at the end, which is several times faster than maintaining them row by row.
 */
export function indexDdl(t: TableSet): string {
  const jobs = ident(t.jobs);
  const pages = ident(t.pages);
  const items = ident(t.items);
  const log = ident(t.log);
  // The adaptive throttle's settings a job's view shows (PageFetched.throttle, at most 100 lines per job and worker): found without reading the job's other lines.
  return `
    CREATE INDEX ON ${jobs} (user_id, requested_at DESC);
    CREATE INDEX ON ${jobs} (status, updated_at DESC);
    CREATE INDEX ON ${jobs} (schedule_id) WHERE schedule_id IS NOT NULL;
    CREATE INDEX ON ${pages} (job_id, fetched_at);
    CREATE INDEX ON ${items} (job_id, extracted_at);
    CREATE INDEX ON ${log} (job_id, seq) WHERE event = 'PageFetched' AND data ? 'throttle';
  `;
}

export function readModelDdl(t: TableSet): string {
  return tableDdl(t) + keyDdl(t) + indexDdl(t);
}
