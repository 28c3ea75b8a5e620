/** The API's answers, as the console reads them (see /docs for the full schemas). */

export type JobStatus = 'pending' | 'running' | 'finished' | 'failed' | 'cancelled';

export interface Job {
  job_id: string;
  status: JobStatus;
  schedule_id: string | null;
  target_id: string | null;
  website_id: string | null;
  start_urls: string[];
  search_url: string | null;
  counters: { pages_fetched: number; pages_failed: number; items_extracted: number; bytes: number; urls_seen: number };
  timings: { requested_at: string | null; dispatched_at: string | null; first_page_at: string | null; finished_at: string | null; duration_ms: number | null };
  error: { code: string | null; message: string | null } | null;
  log_seq: number;
}

export interface Page {
  fetch_id: string;
  url: string;
  final_url: string | null;
  status: number | null;
  content_type: string | null;
  bytes: number | null;
  fetch_ms: number | null;
  depth: number | null;
  render_mode: string | null;
  item_count: number | null;
  ok: boolean;
  error_code: string | null;
  error_message: string | null;
  attempts: number | null;
  fetched_at: string;
}

export interface Item {
  item_key: string;
  fetch_id: string;
  url: string;
  fields: Record<string, string>;
  extracted_at: string;
}

export interface Schedule {
  schedule_id: string;
  status: 'active' | 'paused' | 'cancelled' | 'done';
  target_id: string | null;
  request: { spider: string | null; start_urls: string[]; depth: number; max_pages: number | null } | null;
  cron: string | null;
  interval_ms: number | null;
  run_at: string | null;
  last_scheduled: string | null;
  last_job_id: string | null;
  next_run: string | null;
  next_runs: string[];
  created_at: string;
}

export interface Website {
  id: string;
  name: string;
  base_url: string;
  shared: boolean;
  requires_browser: boolean;
  max_depth: number;
  max_pages: number;
  item_root: string | null;
}

export interface Target {
  id: string;
  website_id: string;
  name: string | null;
  url_template: string;
  keywords: string[];
  location: string | null;
  active: boolean;
  search_url: string;
}

export interface DeadLetter {
  id: string;
  source: 'fetch' | 'events';
  topic: string;
  partition: number;
  offset: string;
  origin: { topic: string; partition: number; offset: string };
  reason: string | null;
  error_class: string | null;
  error_code: string | null;
  error_message: string | null;
  attempts: number | null;
  failed_at: string | null;
  event: string | null;
  job_id: string | null;
  url: string | null;
  key: string | null;
  redriven_at: string | null;
  job_status: string | null;
}

export interface ScrapeMetrics {
  range: { from: number; to: number; step: number; host: string | null; job_id: string | null };
  t: number[];
  series: {
    pages: number[];
    failed: number[];
    bytes: number[];
    retries: number[];
    items: number[];
    p50: (number | null)[];
    p95: (number | null)[];
    p99: (number | null)[];
    status: Record<string, number[]>;
  };
  totals: Record<string, number | null>;
  status_codes: { code: number; pages: number }[];
  errors_by_kind: { kind: string; errors: number; hosts: number; jobs: number; last_seen: number }[];
  errors_by_host: { host_name: string; errors: number; dead_lettered: number; fetches: number; error_rate: number; top_kind: string }[];
  top_hosts: { host_name: string; pages: number; failed: number; bytes_sum: number; p95_ms: number | null; retries: number }[];
  hosts: string[];
  panels: string[];
  timings_ms: Record<string, number>;
}

export interface GroupLag {
  group: string;
  kind: 'consumer-group' | 'projection';
  state: string | null;
  members: number | null;
  lag: number;
  topics: { topic: string; lag: number; partitions: number }[];
}

export interface LagReport {
  available: boolean;
  reason?: string;
  measured_at: string;
  took_ms?: number;
  groups: GroupLag[];
}

/** A message of the WebSocket feed. */
export type FeedMessage =
  | { type: 'hello'; user_id: string }
  | { type: 'dropped'; count: number }
  | { type: 'event'; event: string; job_id: string; topic: string; partition: number; offset: string; data: Record<string, unknown> };
