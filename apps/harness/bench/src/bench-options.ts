/** The command-line options the bench commands share, with their defaults. */
import { parseArgs } from 'node:util';
import { DEFAULT_SITE, type SiteOptions } from './site/site-model.ts';

export interface BenchOptions {
  readonly site: SiteOptions;
  readonly latencyMs: number;
  readonly jitterMs: number;
  readonly failRate: number;
  readonly rounds: number;
  /** Rounds run first and left out of the figures (kept in the JSON, marked). */
  readonly warmupRounds: number;
  readonly concurrency: number;
  readonly workers: number;
  readonly eventPartitions: number;
  readonly fetchPartitions: number;
  readonly projectors: boolean;
  readonly crawleeAutoscale: boolean;
  readonly contenders: readonly ('trawl' | 'crawlee' | 'limit')[];
  /** Extra Trawl pipelines with other settings, run as contenders of their own (A/B in one run). */
  readonly variants: readonly TrawlVariant[];
  readonly out: string | undefined;
}

export interface TrawlVariant {
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
  /** Crawl spec fields laid over the bench's spec for this pipeline's jobs (`spec.formats=["markdown"]`). */
  readonly spec: Readonly<Record<string, unknown>>;
}

/** Splits at commas outside brackets and quotes, so a JSON list stays one value. */
function splitPairs(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && (c === '[' || c === '{')) depth++;
    else if (!quoted && (c === ']' || c === '}')) depth--;
    else if (!quoted && depth === 0 && c === ',') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((p) => p.trim() !== '');
}

/**
 * `label:K=V,K=V` → a variant: environment settings for its services, and `spec.<field>=<JSON>`
 * pairs for its jobs' crawl spec; e.g. `before:TRAWL_PAGE_BUDGET_MS=60000` or
 * `markdown:spec.formats=["markdown"]`.
 */
export function parseVariant(text: string): TrawlVariant {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new Error(`--variant wants label:K=V[,K=V], got "${text}"`);
  const env: Record<string, string> = {};
  const spec: Record<string, unknown> = {};
  for (const pair of splitPairs(text.slice(colon + 1))) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--variant: "${pair}" is not K=V`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (!key.startsWith('spec.')) {
      env[key] = value;
      continue;
    }
    try {
      spec[key.slice('spec.'.length)] = JSON.parse(value);
    } catch {
      throw new Error(`--variant: the value of ${key} must be JSON (e.g. ["markdown"]), got ${value}`);
    }
  }
  return { label: `trawl-${text.slice(0, colon)}`, env, spec };
}

export const USAGE = `options (all optional):
  --pages N            site pages (default ${DEFAULT_SITE.pages})
  --links K            content links per page (default ${DEFAULT_SITE.links})
  --items M            listings (items) per page (default ${DEFAULT_SITE.items})
  --hosts H            spread the site over 127.0.0.1..H (default 1)
  --latency-ms L       server think time per page (default 0); --jitter-ms J adds 0..J
  --fail-rate R        fraction of pages answering 503 once (default 0)
  --rounds R           interleaved rounds (default 3)
  --warmup-rounds W    rounds of every contender run first and not counted (default 1; 0 for none)
  --concurrency C      pages in flight, every contender (default 32)
  --workers W          Trawl worker processes (default 1: one host is one partition, see README)
  --event-partitions P, --fetch-partitions F   Trawl topic partitions (default 6, 12)
  --no-projectors      leave projector-pg/-ch out even when they exist
  --crawlee-autoscale  let Crawlee's pool autoscale from low (default: pinned at C)
  --contenders LIST    comma list of trawl,crawlee,limit (default all three)
  --variant L:K=V,…    one more Trawl pipeline, "trawl-L", with these environment settings and
                       spec.<field>=<JSON> crawl spec fields (repeatable; e.g.
                       before:TRAWL_PAGE_BUDGET_MS=60000,TRAWL_WORKER_CONCURRENCY=32 or
                       markdown:spec.formats=["markdown"])
  --out FILE           JSON file name under bench-results/`;

/**
 * A command's options, parsed by `parse`; an unknown option or a bad value ends the command with
 * one line saying so and the usage on stderr (exit 2), not a stack trace.
 */
export function optionsOrExit<T>(command: string, usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    process.stderr.write(`${command}: ${(err as Error).message}\n\n${usage}\n`);
    process.exit(2);
  }
}

export function parseBenchOptions(argv: readonly string[] = process.argv.slice(2), defaults: Partial<Record<string, string>> = {}): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      pages: { type: 'string' },
      links: { type: 'string' },
      items: { type: 'string' },
      hosts: { type: 'string' },
      render: { type: 'string' },
      'latency-ms': { type: 'string' },
      'jitter-ms': { type: 'string' },
      'fail-rate': { type: 'string' },
      rounds: { type: 'string' },
      'warmup-rounds': { type: 'string' },
      concurrency: { type: 'string' },
      workers: { type: 'string' },
      'event-partitions': { type: 'string' },
      'fetch-partitions': { type: 'string' },
      'no-projectors': { type: 'boolean' },
      'crawlee-autoscale': { type: 'boolean' },
      contenders: { type: 'string' },
      variant: { type: 'string', multiple: true },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const get = (name: Exclude<keyof typeof values, 'variant'>, dflt: string): string => (values[name] as string | undefined) ?? defaults[name] ?? dflt;
  const num = (name: Exclude<keyof typeof values, 'variant'>, dflt: number, min = 0): number => {
    const n = Number(get(name, String(dflt)));
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}`);
    return n;
  };
  const contenders = get('contenders', 'trawl,crawlee,limit').split(',').map((c) => c.trim());
  for (const c of contenders) if (!['trawl', 'crawlee', 'limit'].includes(c)) throw new Error(`unknown contender ${c}`);
  return {
    site: {
      pages: num('pages', DEFAULT_SITE.pages, 1),
      links: num('links', DEFAULT_SITE.links, 1),
      items: num('items', DEFAULT_SITE.items),
      hosts: num('hosts', DEFAULT_SITE.hosts, 1),
      render: get('render', 'html') === 'js' ? 'js' : 'html',
    },
    latencyMs: num('latency-ms', 0),
    jitterMs: num('jitter-ms', 0),
    failRate: num('fail-rate', 0),
    rounds: num('rounds', 3, 1),
    warmupRounds: num('warmup-rounds', 1),
    concurrency: num('concurrency', 32, 1),
    workers: num('workers', 1, 1),
    eventPartitions: num('event-partitions', 6, 1),
    fetchPartitions: num('fetch-partitions', 12, 1),
    projectors: !values['no-projectors'],
    crawleeAutoscale: values['crawlee-autoscale'] ?? false,
    contenders: contenders as BenchOptions['contenders'],
    variants: (values.variant ?? []).map(parseVariant),
    out: values.out ?? defaults.out,
  };
}
