import type { Migration } from '@trawl/store';

/** Migration owner of the API's own tables (the read models belong to projector-pg). */
export const API_MIGRATION_OWNER = 'api';

/**
 * Tables the API owns: API keys (and the triggers that announce their changes), crawl dedupe
 * keys, and the jobs it accepted. `api_jobs` lets a client read its job the instant `POST /crawl`
 * answers, before projector-pg has seen the event; `job_id` is text so that it compares with
 * whatever type the read model uses.
 */
export const API_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'api keys, crawl dedupe keys, accepted jobs',
    sql: `
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        user_id text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        label text,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_user ON api_keys (user_id);

      CREATE TABLE crawl_dedupe (
        user_id text NOT NULL,
        dedupe_key text NOT NULL,
        job_id text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, dedupe_key)
      );
      CREATE INDEX crawl_dedupe_expires ON crawl_dedupe (expires_at);

      CREATE TABLE api_jobs (
        job_id text PRIMARY KEY,
        user_id text NOT NULL,
        dedupe_key text NOT NULL,
        request jsonb NOT NULL,
        requested_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX api_jobs_user ON api_jobs (user_id, requested_at DESC);
    `,
  },
  {
    id: 2,
    description: 'api key ids independent of the keys',
    // Keys made by step 1's code have the first 10 characters of their random part as id, so a
    // listing or a log of the id gives away 60 bits of the secret. Each gets a new random id; the
    // keys themselves (matched by their hash) keep working. md5 of a random UUID: 16 uniformly
    // random hex digits without pgcrypto.
    sql: `
      UPDATE api_keys SET id = 'key_' || substr(md5(gen_random_uuid()::text), 1, 16);
    `,
  },
  {
    id: 3,
    description: 'job content deletions: whose stored content is gone (or going), by retention or by request',
    // A job's row here means its content is being or has been deleted: its pages no longer keep
    // an object shared with another job alive, so two expired jobs sharing one object do not each
    // keep it for the other for ever. A row with deleted_at NULL is a deletion under way (or
    // one whose process died: the sweep takes it again once started_at is stale).
    sql: `
      CREATE TABLE job_content_deletions (
        job_id text PRIMARY KEY,
        reason text NOT NULL CHECK (reason IN ('retention', 'request')),
        started_at timestamptz NOT NULL,
        deleted_at timestamptz,
        deleted_objects int
      );
    `,
  },
  {
    id: 4,
    description: 'api key changes announced on the trawl_api_keys channel',
    // Every API instance keeps an index of the keys in memory (auth/key-index.ts) and learns of
    // a new, revoked or deleted key from these notifications, whoever changed the table: the
    // API, `trawl keys`, or SQL by hand. A payload is the key's state after the change (hash,
    // owner, active), never the key; a TRUNCATE asks every instance for a full resync.
    // NOTIFY is sent at commit, in commit order, and dropped with a rolled-back transaction.
    sql: `
      CREATE FUNCTION api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.key_hash <> NEW.key_hash) THEN
          PERFORM pg_notify('trawl_api_keys', json_build_object('key_hash', OLD.key_hash, 'user_id', OLD.user_id, 'active', false)::text);
        END IF;
        IF TG_OP <> 'DELETE' THEN
          PERFORM pg_notify('trawl_api_keys', json_build_object('key_hash', NEW.key_hash, 'user_id', NEW.user_id, 'active', NEW.revoked_at IS NULL)::text);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER api_keys_notify AFTER INSERT OR DELETE OR UPDATE OF key_hash, user_id, revoked_at ON api_keys
        FOR EACH ROW EXECUTE FUNCTION api_keys_notify();

      CREATE FUNCTION api_keys_notify_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('trawl_api_keys', '{"resync":true}');
        RETURN NULL;
      END $$;
      CREATE TRIGGER api_keys_notify_truncate AFTER TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify_truncate();
    `,
  },
];
