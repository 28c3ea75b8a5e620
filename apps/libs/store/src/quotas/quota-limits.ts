/**
 * Per-user quotas: what one user may hold of the shared platform at a time. Defaults come from
 * the environment; an operator may set any of them per user (`user_quotas`, NULL: the default).
 *
 * | limit | default | counted |
 * |---|---|---|
 * | `active_jobs` | 10 | jobs started and not yet over (API crawls and scheduled ones) |
 * | `pages_per_day` | 100,000 | pages of the jobs started in the last 24 h: a running job's `max_pages`, an ended job's real count |
 * | `schedules` | 100 | schedules that may still run (active or paused) |
 * | `min_interval_seconds` | 60 | shortest time between two runs of a repeating schedule |
 * | `storage_bytes` | 10 GiB | bytes of page content the user's jobs keep in the content store (storage-usage.ts); past it new bodies are not stored and crawls go on |
 */
import type { Pool, PoolClient } from 'pg';

type Db = Pool | PoolClient;

export interface QuotaLimits {
  readonly active_jobs: number;
  readonly pages_per_day: number;
  readonly schedules: number;
  readonly min_interval_seconds: number;
  readonly storage_bytes: number;
}

export type QuotaName = keyof QuotaLimits;

export const QUOTA_NAMES: readonly QuotaName[] = ['active_jobs', 'pages_per_day', 'schedules', 'min_interval_seconds', 'storage_bytes'];

export const DEFAULT_QUOTAS: QuotaLimits = {
  active_jobs: 10,
  pages_per_day: 100_000,
  schedules: 100,
  min_interval_seconds: 60,
  storage_bytes: 10 * 1024 ** 3,
};

const ENV: Readonly<Record<QuotaName, string>> = {
  active_jobs: 'TRAWL_QUOTA_ACTIVE_JOBS',
  pages_per_day: 'TRAWL_QUOTA_PAGES_PER_DAY',
  schedules: 'TRAWL_QUOTA_SCHEDULES',
  min_interval_seconds: 'TRAWL_QUOTA_MIN_INTERVAL_SECONDS',
  storage_bytes: 'TRAWL_QUOTA_STORAGE_BYTES',
};

/** The defaults from `TRAWL_QUOTA_*`, else DEFAULT_QUOTAS. */
export function quotasFromEnv(env: NodeJS.ProcessEnv = process.env): QuotaLimits {
  const out: Record<string, number> = {};
  for (const name of QUOTA_NAMES) {
    const raw = env[ENV[name]];
    if (raw === undefined || raw === '') {
      out[name] = DEFAULT_QUOTAS[name];
      continue;
    }
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${ENV[name]} must be a whole number ≥ 0, got "${raw}"`);
    out[name] = n;
  }
  return out as unknown as QuotaLimits;
}

/** Each user's limits: their overrides over the defaults. */
export async function quotaLimitsOf(db: Db, userIds: readonly string[], defaults: QuotaLimits): Promise<Map<string, QuotaLimits>> {
  const out = new Map(userIds.map((u) => [u, defaults]));
  if (userIds.length === 0) return out;
  // storage_bytes is a bigint, which pg returns as a string.
  const { rows } = await db.query<{ user_id: string } & { [K in QuotaName]: number | string | null }>(
    `SELECT user_id, ${QUOTA_NAMES.join(', ')} FROM user_quotas WHERE user_id = ANY($1::text[])`,
    [[...new Set(userIds)]],
  );
  for (const r of rows) {
    const merged = { ...defaults };
    for (const name of QUOTA_NAMES) if (r[name] !== null) (merged as Record<QuotaName, number>)[name] = Number(r[name]);
    out.set(r.user_id, merged);
  }
  return out;
}

/** Sets (or with null, clears) a user's overrides. */
export async function setUserQuotas(db: Db, userId: string, limits: Partial<Record<QuotaName, number | null>>): Promise<void> {
  const names = QUOTA_NAMES.filter((n) => limits[n] !== undefined);
  if (names.length === 0) return;
  await db.query(
    `INSERT INTO user_quotas (user_id, ${names.join(', ')}) VALUES ($1, ${names.map((_, i) => `$${i + 2}`).join(', ')})
     ON CONFLICT (user_id) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')}, updated_at = now()`,
    [userId, ...names.map((n) => limits[n])],
  );
}
