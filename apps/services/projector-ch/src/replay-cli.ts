/**
 * `npm run replay -w @trawl/projector-ch [-- --from earliest|<time>] [--keep-old] [--no-verify]`:
 * rebuilds the ClickHouse analytics from the topics and swaps them in (the same command as
 * `trawl replay ch`).
 */
import { runReplayCommand } from '@trawl/streams';
import { replayCh } from './replay/replay-ch.ts';

await runReplayCommand('ch', replayCh);
