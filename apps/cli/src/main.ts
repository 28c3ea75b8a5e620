/**
 * `trawl` — the command line of Trawl. Usage errors exit 2, failures 1 (one line, no stack),
 * success 0.
 */
import { parseArgs } from 'node:util';
import { ApiClient } from './lib/api-client.ts';
import { CliError, UsageError } from './lib/cli-error.ts';
import { printable } from './lib/format.ts';
import { build } from './commands/build.ts';
import { crawl, parseCount } from './commands/crawl.ts';
import { demo } from './commands/demo.ts';
import { down } from './commands/down.ts';
import { jobs } from './commands/jobs.ts';
import { createKey } from './commands/keys.ts';
import { logs } from './commands/logs.ts';
import { replay } from './commands/replay.ts';
import { status } from './commands/status.ts';
import { up } from './commands/up.ts';

export const USAGE = `usage: trawl <command>

  up                      start the local stack and every service in the background (logs in .trawl/logs/)
  down                    stop every service, then the stack
  status [--json]         the stack's parts and the services (state, pid, restarts)
  build                   compile the services into .trawl/build/ (up does this itself)
  demo                    up, then crawl the bundled demo site with live progress (npm start)
  crawl <url>             submit a crawl and follow it live
      --depth N             link hops from the start URL (default 1)
      --max-pages N         page budget
      --spider ID           a website whose selectors and pagination apply
      --fresh               a new job even if an identical one ran recently (ignore_cache)
      --follow | --detach   follow with a progress bar and summary (default) | print the job id and return
  jobs [--status s] [--limit N] [--json]
  logs <job id>           the job's log, live until it ends (Server-Sent Events)
  keys create <user>      a new API key for <user>, alone on stdout [--label text]
  replay <pg|ch>          rebuild the Postgres or ClickHouse read models from the topics
      --swap-threshold N    events left below which the live projector is held back for the swap (0: all in bulk first)

The API is at TRAWL_API_URL (default http://127.0.0.1:3000); the key comes from TRAWL_API_KEY or .trawl/api-key.`;

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      depth: { type: 'string' },
      'max-pages': { type: 'string' },
      spider: { type: 'string' },
      fresh: { type: 'boolean', default: false },
      follow: { type: 'boolean' },
      detach: { type: 'boolean', default: false },
      status: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      label: { type: 'string' },
      'swap-threshold': { type: 'string' },
      'keep-stack': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...args] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  switch (command) {
    case 'up':
      await up();
      return 0;
    case 'down':
      await down({ keepStack: values['keep-stack'] });
      return 0;
    case 'status':
      return status({ json: values.json });
    case 'build':
      await build();
      return 0;
    case 'demo':
      return demo();
    case 'crawl': {
      const url = args[0];
      if (!url || args.length > 1) throw new UsageError('usage: trawl crawl <url> [--depth N] [--max-pages N] [--follow|--detach]');
      const result = await crawl(ApiClient.fromEnv(), url, {
        depth: parseCount('depth', values.depth, 0, 10) ?? 1,
        ...(values['max-pages'] === undefined ? {} : { maxPages: parseCount('max-pages', values['max-pages'], 1, 100_000)! }),
        ...(values.spider === undefined ? {} : { spider: values.spider }),
        fresh: values.fresh,
        follow: values.follow ?? !values.detach,
      });
      return result && result.status !== 'finished' ? 1 : 0;
    }
    case 'jobs':
      await jobs(ApiClient.fromEnv(), { ...(values.status ? { status: values.status } : {}), limit: parseCount('limit', values.limit, 1, 500) ?? 20, json: values.json });
      return 0;
    case 'logs':
      if (args.length !== 1) throw new UsageError('usage: trawl logs <job id>');
      return logs(ApiClient.fromEnv(), args[0]!);
    case 'keys': {
      if (args[0] !== 'create' || args.length !== 2) throw new UsageError('usage: trawl keys create <user> [--label text]');
      process.stdout.write((await createKey(args[1]!, values.label ?? null)) + '\n');
      return 0;
    }
    case 'replay': {
      const swapThreshold = parseCount('swap-threshold', values['swap-threshold'], 0, 100_000_000);
      await replay(args[0], swapThreshold === undefined ? {} : { swapThreshold });
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CliError) {
      // A usage message is ours and keeps its lines; any other may relay what the API or a page said.
      process.stderr.write(`trawl: ${err instanceof UsageError ? err.message : printable(err.message)}\n`);
      process.exit(err.exitCode);
    }
    // parseArgs reports unknown options and missing values as TypeErrors with a code.
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`trawl: ${(err as Error).message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`trawl: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
