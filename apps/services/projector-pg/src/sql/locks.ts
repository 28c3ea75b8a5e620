/**
 * The lock that lets a replay swap tables under a running projector. Every live batch takes it
 * shared inside its transaction; the swap takes it exclusive, so it waits for the batch in flight
 * to commit and holds the next one back until the renames are committed. Its key names the
 * projection, not a version, so a replay of version N+1 also pauses a live version N.
 */
export const PG_SWAP_LOCK = 'trawl:projection:pg:swap';

/** Held by a replay for its whole run: two replays of one projection would race on the swap. */
export const PG_REPLAY_LOCK = 'trawl:projection:pg:replay';

export const SHARED_SWAP_LOCK_SQL = `SELECT pg_advisory_xact_lock_shared(hashtext('${PG_SWAP_LOCK}'))`;
export const EXCLUSIVE_SWAP_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('${PG_SWAP_LOCK}'))`;
