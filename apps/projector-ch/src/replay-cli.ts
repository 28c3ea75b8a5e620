/**
 * `npm run replay -w @trawl/projector-ch [-- --from earliest|<time>] [--keep-old] [--no-verify]`:
 * rebuilds the ClickHouse analytics from the topics and swaps them in. Progress on stderr, the
 * report as JSON on stdout; exit code 1 with the error's code when it fails.
 */
import { parseArgs } from 'node:util';
import { replayCh } from './replay/replay-ch.ts';
import { ProjectorChError } from './errors.ts';

const { values } = parseArgs({
  options: {
    from: { type: 'string', default: 'earliest' },
    'keep-old': { type: 'boolean', default: false },
    'no-verify': { type: 'boolean', default: false },
  },
});

try {
  const from = values.from === 'earliest' ? 'earliest' : new Date(values.from);
  const report = await replayCh({ from, keepOld: values['keep-old'], verify: !values['no-verify'] });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
} catch (err) {
  const code = err instanceof ProjectorChError ? err.code : 'CH_REPLAY_FAILED';
  process.stderr.write(`replay ch failed (${code}): ${(err as Error).message}\n`);
  process.exit(1);
}
