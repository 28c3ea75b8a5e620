/**
 * `npm run replay -w @trawl/projector-pg [-- --keep-old] [--no-verify]`: rebuilds the Postgres
 * read models from the topics and swaps them in (the same command as `trawl replay pg`).
 */
import { runReplayCommand } from '@trawl/streams';
import { replayPg } from './replay/replay-pg.ts';

await runReplayCommand('pg', replayPg);
