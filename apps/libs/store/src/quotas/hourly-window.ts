/**
 * The hour the webhook limits are counted over (`webhook_usage`, WEBHOOK_MIGRATIONS step 3): a
 * user's counts in minute buckets, the window being the current minute and the 59 before it. A
 * bucket leaves the window 60 minutes after its minute began, so a spent limit waits for its oldest
 * buckets to leave; that moment is what a refusal's `retry-after` and a held delivery's next try
 * are computed from. Pure.
 *
 * Why buckets and not a token bucket: "in the last hour" is what `GET /quotas` shows and what the
 * limit promises (never more than the limit in any 60 minutes, counted by the minute); a token
 * bucket lets a full bucket and a whole hour's refill through within one hour. The cost is
 * lumpiness: what was sent in one minute comes back in one minute, an hour later.
 */

/** The window's length; buckets are minutes (`date_trunc('minute', now())` in SQL). */
export const WINDOW_MS = 3_600_000;

/** SQL: a `minute` still in the window, by the database's clock (the one every instance shares). */
export const IN_WINDOW_SQL = `minute > date_trunc('minute', now()) - make_interval(secs => ${WINDOW_MS / 1000})`;

/** One minute of a user's counts: when it began (epoch ms) and what it holds. */
export interface Bucket {
  readonly at: number;
  readonly n: number;
}

const live = (buckets: readonly Bucket[], now: number): Bucket[] => buckets.filter((b) => b.n > 0 && b.at + WINDOW_MS > now).sort((a, b) => a.at - b.at);

/** What the buckets still in the window at `now` hold. */
export function usedAt(buckets: readonly Bucket[], now: number): number {
  return live(buckets, now).reduce((sum, b) => sum + b.n, 0);
}

/**
 * When `need` more fit under `limit`: `now` if they fit already, else the moment enough of the
 * oldest buckets have left the window. A limit below `need` never has room: `now` + one window,
 * a time to look again (an operator may have raised it by then).
 */
export function roomAt(buckets: readonly Bucket[], limit: number, now: number, need = 1): number {
  if (need > limit) return now + WINDOW_MS;
  const inWindow = live(buckets, now);
  let used = inWindow.reduce((sum, b) => sum + b.n, 0);
  if (used + need <= limit) return now;
  for (const b of inWindow) {
    used -= b.n;
    if (used + need <= limit) return b.at + WINDOW_MS;
  }
  return now + WINDOW_MS;
}
