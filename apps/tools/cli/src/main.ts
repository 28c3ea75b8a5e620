/**
 * `trawl` — the command line of Trawl. Usage errors exit 2, failures 1 (one line, no stack),
 * success 0.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApiClient } from './lib/api-client.ts';
import { CliError, UsageError } from './lib/cli-error.ts';
import { printable } from './lib/format.ts';
import { build } from './commands/build.ts';
import { crawl, parseCount, parseSitemapMode } from './commands/crawl.ts';
import { CRAWL_FLAG_OPTIONS, CRAWL_FLAGS_USAGE, optionsBody } from './commands/crawl-options.ts';
import { demo } from './commands/demo.ts';
import { down } from './commands/down.ts';
import { exportJob } from './commands/export.ts';
import { jobs } from './commands/jobs.ts';
import { isJobAction, jobAction } from './commands/job-control.ts';
import { reextract } from './commands/reextract.ts';
import { createKey, listKeys, revokeKey } from './commands/keys.ts';
import { logs } from './commands/logs.ts';
import { replay } from './commands/replay.ts';
import { map, scrape } from './commands/scrape.ts';
import { replayOptionsFromFlags } from '@trawl/streams';
import { createSchedule, editSchedule, isScheduleAction, listSchedules, scheduleAction } from './commands/schedules.ts';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, redeliver, testWebhook } from './commands/webhooks.ts';
import { status } from './commands/status.ts';
import { up } from './commands/up.ts';

export const USAGE = `usage: trawl <command>

  up                      start the local stack and every service in the background (logs in .trawl/logs/)
  down                    stop every service, then the stack
  status [--json]         the stack's parts and the services (state, pid, restarts)
  build                   compile the services into .trawl/build/ (up does this itself)
  demo                    up, then crawl the bundled demo site with live progress (npm start)
  crawl <url> [--json]    submit a crawl and follow it live (--json: the answer, or the final status when followed)
      --depth N             link hops from the start URL (default 1)
      --max-pages N         page budget
      --spider ID           a website whose selectors and pagination apply
      --fresh               a new job even if an identical one ran recently (ignore_cache)
      --sitemap MODE        include (default) | only | skip: what a site root's sitemaps add
      --follow | --detach   follow with a progress bar and summary (default) | print the job id and return
${CRAWL_FLAGS_USAGE}
  scrape <url> [--json]   fetch one page now (POST /scrape) and print it (the first --format; --json: the whole answer)
      --format F1,F2        markdown (default), html, text, links, screenshot, pdf, metadata
      --timeout-ms N        how long to wait for the page (else the job goes on and the command fails)
  map <url> [--json]      a site's URLs from its sitemaps and its page's links (POST /map), one a line
      --search S            only URLs containing S (case-insensitive)
      --limit N             at most N URLs (default 100, ≤ 5000)
      --sitemap MODE        include (default) | only | skip
  jobs [--status s] [--limit N] [--json]   (--status error = failed)
  cancel <job id> [--json]        cancel a job
  pause <job id> [--json]         pause a job: no new fetches, state kept, until resumed
  resume <job id> [--json]        resume a paused job
  retry-failed <job id> [--json]  a new job over an ended job's failed pages
  reextract <job id> --spec FILE [--json]
                          a new job that parses an ended job's stored pages again under the extraction
                          rules in FILE (JSON: item_root, item_fields, formats, only_main_content), fetching
                          nothing; prints its id (its changes: GET /jobs/<id>/changes)
  logs <job id> [--json]  the job's log, live until it ends (Server-Sent Events; --json: one object a line)
  export <job id>         every page of a job to stdout
      --format ndjson|csv   one JSON object a line (default) or CSV with a header row
      --include FORMAT      each page's stored html, text or markdown (the crawl asked for it with formats)
  keys create <user>      a new API key for <user>, alone on stdout, its id on stderr [--label text] [--json]
  keys revoke <key id>    the key is refused from then on (each API knows within milliseconds, by notification) [--json]
  keys list [<user>]      every key (or one user's): id, user, active or revoked, created, label; never a key [--json]
  schedules list [--json]                   the caller's schedules with their next run
  schedules create <url> --interval I | --at TIME [--depth N] [--max-pages N] [--spider ID] [--json]
                          a scheduled crawl: I a duration (30m, 1d) or a cron expression (UTC); TIME RFC 3339
  schedules edit <schedule id> [--interval I] [--at TIME] [--time-zone ZONE] [--overlap skip|queue|allow] [--json]
                                            change a schedule (PATCH /schedules/:id); its next run moves
  schedules pause|resume|cancel <schedule id> [--json]
  webhooks list [--json]                    the caller's webhooks
  webhooks create <url> --events E1,E2 [--secret S] [--job ID] [--schedule ID] [--json]
                          events: job.started, job.completed, job.failed, job.cancelled, items.extracted,
                          page.changed; without --secret one is made and shown once (stderr)
  webhooks delete <webhook id> [--json]
  webhooks deliveries <webhook id> [--status s] [--limit N] [--json]
  webhooks test <webhook id> [--json]       send a webhook.test delivery
  webhooks redeliver <webhook id> <delivery id> [--json]   send a delivery once more (same body and id)
  --version               the CLI's version
  replay <pg|ch>          rebuild the Postgres or ClickHouse read models from the topics
      --swap-threshold N    events left below which the live projector is held back for the swap (0: all in bulk first)
      --from earliest|T     ch only: re-project from a time, keeping the live facts before it
      --keep-old            keep the replaced tables instead of dropping them
      --no-verify           swap without comparing with the live read model

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
      sitemap: { type: 'string' },
      follow: { type: 'boolean' },
      detach: { type: 'boolean', default: false },
      status: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      label: { type: 'string' },
      format: { type: 'string' },
      ...CRAWL_FLAG_OPTIONS,
      'swap-threshold': { type: 'string' },
      from: { type: 'string' },
      'keep-old': { type: 'boolean' },
      'no-verify': { type: 'boolean' },
      'keep-stack': { type: 'boolean', default: false },
      interval: { type: 'string' },
      at: { type: 'string' },
      'time-zone': { type: 'string' },
      search: { type: 'string' },
      'timeout-ms': { type: 'string' },
      overlap: { type: 'string' },
      events: { type: 'string' },
      secret: { type: 'string' },
      job: { type: 'string' },
      schedule: { type: 'string' },
      spec: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  const [command, ...args] = positionals;
  if (values.version) {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(values.json ? JSON.stringify({ version }) + '\n' : `trawl ${version}\n`);
    return 0;
  }
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
        ...(values.sitemap === undefined ? {} : { sitemap: parseSitemapMode(values.sitemap) }),
        fresh: values.fresh,
        follow: values.follow ?? !values.detach,
        json: values.json,
        options: optionsBody(values),
      });
      return result && result.status !== 'finished' ? 1 : 0;
    }
    case 'scrape': {
      if (args.length !== 1) throw new UsageError('usage: trawl scrape <url> [--format markdown,links] [--timeout-ms N] [--json]');
      const formats = (values.format ?? 'markdown').split(',').map((f) => f.trim()).filter(Boolean);
      const timeoutMs = parseCount('timeout-ms', values['timeout-ms'], 1, 3_600_000);
      return scrape(ApiClient.fromEnv(), args[0]!, { formats, ...(timeoutMs === undefined ? {} : { timeoutMs }), json: values.json, options: optionsBody(values) });
    }
    case 'map': {
      if (args.length !== 1) throw new UsageError('usage: trawl map <url> [--search S] [--limit N] [--sitemap include|only|skip] [--json]');
      const limit = parseCount('limit', values.limit, 1, 5000);
      return map(ApiClient.fromEnv(), args[0]!, { ...(values.search ? { search: values.search } : {}), ...(limit === undefined ? {} : { limit }), ...(values.sitemap === undefined ? {} : { sitemap: parseSitemapMode(values.sitemap) }), json: values.json });
    }
    case 'jobs':
      await jobs(ApiClient.fromEnv(), { ...(values.status ? { status: values.status } : {}), limit: parseCount('limit', values.limit, 1, 500) ?? 20, json: values.json });
      return 0;
    case 'logs':
      if (args.length !== 1) throw new UsageError('usage: trawl logs <job id>');
      return logs(ApiClient.fromEnv(), args[0]!, { json: values.json });
    case 'export':
      if (args.length !== 1) throw new UsageError('usage: trawl export <job id> --format ndjson|csv [--include markdown]');
      if ((values.include?.length ?? 0) > 1) throw new UsageError('export takes one --include FORMAT');
      return exportJob(ApiClient.fromEnv(), args[0]!, { format: values.format ?? 'ndjson', ...(values.include?.[0] === undefined ? {} : { include: values.include[0] }) });
    case 'keys': {
      if (args[0] === 'revoke' && args.length === 2) {
        await revokeKey(args[1]!);
        process.stdout.write(values.json ? JSON.stringify({ id: args[1], revoked: true }) + '\n' : `${args[1]}: revoked\n`);
        return 0;
      }
      if (args[0] === 'list' && args.length <= 2) {
        await listKeys(args[1], { json: values.json });
        return 0;
      }
      if (args[0] !== 'create' || args.length !== 2) throw new UsageError('usage: trawl keys create <user> [--label text] [--json] | trawl keys revoke <key id> [--json] | trawl keys list [<user>] [--json]');
      const created = await createKey(args[1]!, values.label ?? null);
      if (values.json) process.stdout.write(JSON.stringify({ id: created.id, user_id: created.userId, key: created.key }) + '\n');
      else {
        process.stdout.write(created.key + '\n');
        process.stderr.write(`key id ${created.id} (revoke with: npx trawl keys revoke ${created.id})\n`);
      }
      return 0;
    }
    case 'schedules': {
      const [sub, id, ...rest] = args;
      const api = () => ApiClient.fromEnv();
      if ((sub === 'list' || sub === undefined) && id === undefined) return listSchedules(api(), { json: values.json }).then(() => 0);
      if (sub === 'create' && id !== undefined && rest.length === 0) {
        const maxPages = parseCount('max-pages', values['max-pages'], 1, 100_000);
        await createSchedule(api(), id, {
          depth: parseCount('depth', values.depth, 0, 10) ?? 1,
          ...(maxPages === undefined ? {} : { maxPages }),
          ...(values.spider === undefined ? {} : { spider: values.spider }),
          ...(values.interval === undefined ? {} : { interval: values.interval }),
          ...(values.at === undefined ? {} : { at: values.at }),
          json: values.json,
        });
        return 0;
      }
      if (sub === 'edit' && id !== undefined && rest.length === 0) {
        await editSchedule(api(), id, {
          ...(values.interval === undefined ? {} : { interval: values.interval }),
          ...(values.at === undefined ? {} : { at: values.at }),
          ...(values['time-zone'] === undefined ? {} : { timeZone: values['time-zone'] }),
          ...(values.overlap === undefined ? {} : { overlap: values.overlap }),
          json: values.json,
        });
        return 0;
      }
      if (isScheduleAction(sub) && id !== undefined && rest.length === 0) return scheduleAction(api(), sub, id, { json: values.json }).then(() => 0);
      throw new UsageError('usage: trawl schedules list | create <url> --interval I | --at TIME | edit <schedule id> [--interval I] [--at TIME] [--time-zone Z] [--overlap skip|queue|allow] | pause|resume|cancel <schedule id>  [--json]');
    }
    case 'webhooks': {
      const [sub, id, ...rest] = args;
      const api = () => ApiClient.fromEnv();
      const json = values.json;
      if ((sub === 'list' || sub === undefined) && id === undefined) return listWebhooks(api(), { json }).then(() => 0);
      if (sub === 'redeliver' && id !== undefined && rest.length === 1) return redeliver(api(), id, rest[0]!, { json }).then(() => 0);
      if (id !== undefined && rest.length === 0) {
        switch (sub) {
          case 'create':
            await createWebhook(api(), id, {
              json,
              ...(values.events === undefined ? {} : { events: values.events }),
              ...(values.secret === undefined ? {} : { secret: values.secret }),
              ...(values.job === undefined ? {} : { job: values.job }),
              ...(values.schedule === undefined ? {} : { schedule: values.schedule }),
            });
            return 0;
          case 'delete':
            return deleteWebhook(api(), id, { json }).then(() => 0);
          case 'deliveries':
            return listDeliveries(api(), id, { json, limit: parseCount('limit', values.limit, 1, 500) ?? 20, ...(values.status ? { status: values.status } : {}) }).then(() => 0);
          case 'test':
            return testWebhook(api(), id, { json }).then(() => 0);
        }
      }
      throw new UsageError('usage: trawl webhooks list | create <url> --events E1,E2 [--secret S] [--job ID] [--schedule ID] | delete|deliveries|test <webhook id> | redeliver <webhook id> <delivery id>  [--json]');
    }
    case 'replay': {
      const swapThreshold = parseCount('swap-threshold', values['swap-threshold'], 0, 100_000_000);
      await replay(args[0], { ...replayOptionsFromFlags(values), ...(swapThreshold === undefined ? {} : { swapThreshold }) });
      return 0;
    }
    case 'reextract':
      if (args.length !== 1 || !values.spec) throw new UsageError('usage: trawl reextract <job id> --spec FILE [--json]');
      return reextract(ApiClient.fromEnv(), args[0]!, values.spec, { json: values.json });
    case 'cancel':
    case 'pause':
    case 'resume':
    case 'retry-failed':
      if (args.length !== 1 || !isJobAction(command)) throw new UsageError(`usage: trawl ${command} <job id> [--json]`);
      await jobAction(ApiClient.fromEnv(), command, args[0]!, { json: values.json });
      return 0;
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
