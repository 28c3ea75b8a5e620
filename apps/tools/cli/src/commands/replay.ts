/**
 * `trawl replay <pg|ch>`: rebuilds a read model from the topics while the system runs
 * (replayPg from @trawl/projector-pg, replayCh from @trawl/projector-ch, both adapters of
 * streams' replayAndSwap; the flags and the failure line are streams' replay command). Loaded on
 * demand: the projector packages are optional to the rest of the CLI.
 */
import { replayFailureLine, type ReplayOptions as StreamsReplayOptions } from '@trawl/streams';
import { CliError, UsageError } from '../lib/cli-error.ts';

type Replay = (options?: StreamsReplayOptions) => Promise<unknown>;

const TARGETS = {
  pg: { pkg: '@trawl/projector-pg', fn: 'replayPg' },
  ch: { pkg: '@trawl/projector-ch', fn: 'replayCh' },
} as const;

export type ReplayOptions = Pick<StreamsReplayOptions, 'from' | 'keepOld' | 'verify' | 'swapThreshold'>;

export async function replay(target: string | undefined, options: ReplayOptions = {}): Promise<void> {
  if (target !== 'pg' && target !== 'ch') throw new UsageError('usage: trawl replay <pg|ch>');
  const { pkg, fn } = TARGETS[target];
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pkg)) as Record<string, unknown>;
  } catch (err) {
    // The package, or its entry point, is not there yet (it is being written alongside).
    if ((err as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliError(`${pkg} is not available yet, so \`trawl replay ${target}\` cannot run (${(err as Error).message.split('\n')[0]})`);
    }
    throw err;
  }
  const run = mod[fn] as Replay | undefined;
  if (typeof run !== 'function') throw new CliError(`${pkg} does not export ${fn}() yet`);
  process.stderr.write(`replaying into ${target === 'pg' ? 'Postgres' : 'ClickHouse'} (the live system keeps running)…\n`);
  const report = await run({ ...options }).catch((err: unknown) => {
    const line = replayFailureLine(target, err);
    throw line === undefined ? err : new CliError(line);
  });
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
}
