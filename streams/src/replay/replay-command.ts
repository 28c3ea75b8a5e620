/**
 * The replay command, written once: its flags, how they become ReplayOptions, and the one line a
 * failed replay is reported in. `trawl replay pg|ch` runs it; the projector packages'
 * `npm run replay` runs it through `runReplayCommand`.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ReplayOptions } from './replay-and-swap.ts';

export const REPLAY_FLAGS = {
  from: { type: 'string' },
  'keep-old': { type: 'boolean' },
  'no-verify': { type: 'boolean' },
  'swap-threshold': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

export interface ReplayFlags {
  readonly from?: string;
  readonly 'keep-old'?: boolean;
  readonly 'no-verify'?: boolean;
}

/** `--from earliest|<time>`, `--keep-old`, `--no-verify` as options (the swap threshold is parsed by the caller, with its limits). */
export function replayOptionsFromFlags(flags: ReplayFlags): Pick<ReplayOptions, 'from' | 'keepOld' | 'verify'> {
  return {
    ...(flags.from !== undefined ? { from: flags.from === 'earliest' ? 'earliest' : new Date(flags.from) } : {}),
    ...(flags['keep-old'] ? { keepOld: true } : {}),
    ...(flags['no-verify'] ? { verify: false } : {}),
  };
}

/**
 * A replay's failure in one line when the error is a projector's coded one (`PG_…`, `CH_…`: it
 * says what went wrong and where, no stack needed); undefined for anything else.
 */
export function replayFailureLine(label: string, err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^(PG|CH)_[A-Z_]+$/.test(code)) return `replay ${label} failed (${code}): ${(err as Error).message}`;
  return undefined;
}

/**
 * A package's `npm run replay [-- --from earliest|<time>] [--keep-old] [--no-verify]`: progress on
 * stderr, the report as JSON on stdout; exit code 1 and one line when it fails.
 */
export async function runReplayCommand(label: string, replay: (options: ReplayOptions) => Promise<unknown>, args: string[] = process.argv.slice(2)): Promise<never> {
  try {
    const { values } = parseArgs({ args, options: REPLAY_FLAGS });
    const report = await replay(replayOptionsFromFlags(values));
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`${replayFailureLine(label, err) ?? `replay ${label} failed (${label.toUpperCase()}_REPLAY_FAILED): ${(err as Error).message}`}\n`);
    process.exit(1);
  }
}
