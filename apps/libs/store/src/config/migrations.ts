import type { Migration } from '../migrate.ts';

/**
 * The configuration model: what to crawl and when. Owned by the dispatcher (it runs the
 * schedules) and written by the API (users create websites, targets and schedules).
 */
export const CONFIG_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'websites, targets, schedules',
    sql: `
      CREATE TABLE websites (
        id text PRIMARY KEY,
        owner_id text,
        name text NOT NULL,
        base_url text NOT NULL,
        requires_browser boolean NOT NULL DEFAULT false,
        pagination_type text NOT NULL DEFAULT 'none' CHECK (pagination_type IN ('none', 'next_link', 'page_param')),
        next_link_selector text,
        page_param text,
        item_root text,
        item_fields jsonb NOT NULL DEFAULT '[]',
        include_patterns jsonb NOT NULL DEFAULT '[]',
        exclude_patterns jsonb NOT NULL DEFAULT '[]',
        same_host boolean NOT NULL DEFAULT true,
        allowed_hosts jsonb NOT NULL DEFAULT '[]',
        max_depth int NOT NULL DEFAULT 1 CHECK (max_depth >= 0),
        max_pages int NOT NULL DEFAULT 1000 CHECK (max_pages > 0),
        host_concurrency int NOT NULL DEFAULT 8 CHECK (host_concurrency > 0),
        host_delay_ms int NOT NULL DEFAULT 0 CHECK (host_delay_ms >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE targets (
        id text PRIMARY KEY,
        owner_id text,
        website_id text NOT NULL REFERENCES websites (id),
        name text,
        url_template text NOT NULL,
        keywords jsonb NOT NULL DEFAULT '[]',
        location text,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE schedules (
        id text PRIMARY KEY,
        owner_id text,
        target_id text REFERENCES targets (id),
        request jsonb,
        cron text,
        interval_ms bigint,
        run_at timestamptz,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'cancelled', 'done')),
        last_scheduled timestamptz,
        last_job_id text,
        next_due timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (target_id IS NOT NULL OR request IS NOT NULL)
      );
      CREATE INDEX schedules_due ON schedules (next_due) WHERE status = 'active';
      CREATE INDEX schedules_owner ON schedules (owner_id);
      CREATE INDEX targets_owner ON targets (owner_id);
    `,
  },
  {
    id: 2,
    description: 'why a schedule was paused or its slot skipped; per-user quotas and the ledger they are counted on',
    sql: `
      ALTER TABLE schedules
        ADD COLUMN paused_reason text,
        ADD COLUMN paused_message text,
        ADD COLUMN paused_at timestamptz,
        ADD COLUMN skipped_at timestamptz,
        ADD COLUMN skipped_reason text;

      -- Operators' per-user overrides of the quota defaults (NULL: the default).
      CREATE TABLE user_quotas (
        user_id text PRIMARY KEY,
        active_jobs int CHECK (active_jobs >= 0),
        pages_per_day int CHECK (pages_per_day >= 0),
        schedules int CHECK (schedules >= 0),
        min_interval_seconds int CHECK (min_interval_seconds >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      -- Every job a user started (API or dispatcher) and the pages it may fetch; settled_pages is
      -- what it fetched, written once the read model shows it over.
      CREATE TABLE job_quota_ledger (
        job_id text PRIMARY KEY,
        user_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        max_pages int NOT NULL CHECK (max_pages >= 0),
        settled_pages int
      );
      CREATE INDEX job_quota_ledger_user ON job_quota_ledger (user_id, created_at);
      CREATE INDEX job_quota_ledger_open ON job_quota_ledger (user_id) WHERE settled_pages IS NULL;
    `,
  },
  {
    id: 3,
    description: "a schedule's time zone (its cron read in it) and overlap policy",
    sql: `
      ALTER TABLE schedules
        ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC',
        ADD COLUMN overlap text NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'queue', 'allow'));
    `,
  },
  {
    id: 4,
    description: 'optional dedupe of a scheduled crawl: a slot answered from an identical crawl started within the dedupe TTL',
    sql: `ALTER TABLE schedules ADD COLUMN dedupe boolean NOT NULL DEFAULT false;`,
  },
  {
    id: 5,
    description: 'the storage quota: a per-user override, and the content bytes of each ended job, counted once (quotas/storage-usage.ts)',
    sql: `
      ALTER TABLE user_quotas ADD COLUMN storage_bytes bigint CHECK (storage_bytes >= 0);

      -- A job's content bytes, summed from the read model's pages once the job has been over for a
      -- while (its pages no longer change); a job whose content is deleted stops counting.
      CREATE TABLE job_content_usage (
        job_id text PRIMARY KEY,
        user_id text NOT NULL,
        bytes bigint NOT NULL CHECK (bytes >= 0),
        settled_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX job_content_usage_user ON job_content_usage (user_id);
    `,
  },
  {
    id: 6,
    description: 'per-user overrides of the webhook limits (quotas/webhook-quota-limits.ts)',
    sql: `
      ALTER TABLE user_quotas
        ADD COLUMN webhooks int CHECK (webhooks >= 0),
        ADD COLUMN webhook_tests_per_hour int CHECK (webhook_tests_per_hour >= 0),
        ADD COLUMN webhook_deliveries_per_hour int CHECK (webhook_deliveries_per_hour >= 0);
    `,
  },
  {
    id: 7,
    description: "a website's request options: headers, user agent, locale, initial cookies (@trawl/crawl request-options.ts)",
    sql: `
      -- Cookies are credentials and sit here in clear for now, as in the job's spec; the encrypted
      -- path (secrets and sessions) is another step of issue 33.
      ALTER TABLE websites
        ADD COLUMN headers jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN user_agent text,
        ADD COLUMN locale text,
        ADD COLUMN cookies jsonb NOT NULL DEFAULT '{}';
    `,
  },
  {
    id: 8,
    description: "a website's reach options (proxies, sessions, login, actions, block patterns, throttling, link scope) and the load_more pagination",
    sql: `
      -- One JSON document: the options are read together into the spec and evolve with it; credentials in it are sealed.
      ALTER TABLE websites
        ADD COLUMN reach jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN load_more_selector text,
        DROP CONSTRAINT IF EXISTS websites_pagination_type_check,
        ADD CONSTRAINT websites_pagination_type_check CHECK (pagination_type IN ('none', 'next_link', 'page_param', 'infinite_scroll', 'load_more'));
    `,
  },
  {
    id: 9,
    description: "users' secrets (POST /secrets), sealed under TRAWL_SECRETS_KEY (secrets/user-secrets.ts)",
    sql: `
      -- value is sealed (tsec1.…) with the owner and the name as context: never clear, and a row
      -- copied to another user or name does not open.
      CREATE TABLE user_secrets (
        user_id text NOT NULL,
        name text NOT NULL,
        value text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, name)
      );
    `,
  },
  {
    id: 10,
    description: "a job's quota reservation (quotas/quota-reservation.ts): counted while pending_until is ahead, for good once confirmed (NULL)",
    sql: `
      ALTER TABLE job_quota_ledger ADD COLUMN pending_until timestamptz;
    `,
  },
  {
    id: 11,
    description: "a website's XPath item root and item schema (JSON Schema the worker validates each item against)",
    sql: `
      ALTER TABLE websites
        ADD COLUMN item_root_xpath text,
        ADD COLUMN item_schema jsonb;
    `,
  },
];
