/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (node --cpu-prof): self time per sampled
 * function, grouped into the categories the issue asks about (fetch, parse, encode, Kafka,
 * frontier, Postgres…) by the file each function lives in. Self time, not total: every sample is
 * counted once, so the categories add up to the process's CPU.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** First match wins: the order puts specific paths before the general ones. */
const CATEGORIES: readonly (readonly [string, RegExp])[] = [
  ['idle', /^\(idle\)$/],
  ['gc', /^\(garbage collector\)$/],
  ['startup (module loading, tsx)', /node_modules\/(tsx|esbuild|get-tsconfig)\/|^node:internal\/(modules|bootstrap|source_map|deps\/cjs-module-lexer|main)\//],
  ['kafka (kafkajs)', /node_modules\/kafkajs\//],
  ['encode/decode (avro, registry)', /node_modules\/avsc\/|streams\/src\/registry\//],
  ['postgres (pg)', /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//],
  ['parse (htmlparser2, cheerio, css-select)', /node_modules\/(cheerio|cheerio-select|htmlparser2|domhandler|domutils|css-select|css-what|entities|nth-check|boolbase|dom-serializer)\/|crawl\/src\/parse\//],
  ['fetch (undici, fetcher)', /node_modules\/undici\/|crawl\/src\/fetch\/|crawl\/src\/safety\//],
  ['frontier decide (crawl)', /crawl\/src\/frontier\//],
  ['url rules/normalise (crawl)', /crawl\/src\/(url|rules)\//],
  ['politeness/robots (crawl)', /crawl\/src\/politeness\//],
  ['worker events (crawl)', /crawl\/src\/worker\//],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|thread-stream|fast-redact|quick-format-unescaped)/],
  ['consumer/producer runtime (streams)', /streams\/src\//],
  ['frontier app', /apps\/services\/frontier\/src\//],
  ['worker app', /apps\/services\/worker\/src\//],
  ['projector-pg app', /apps\/services\/projector-pg\/src\//],
  ['other node_modules', /node_modules\//],
  ['node: streams/net/timers', /^node:internal\/(streams|net|stream_base|timers|dns|http|tls|async_hooks|process\/task_queues)|^node:(net|stream|events|buffer|timers)/],
  ['node: crypto', /crypto/],
  ['node: other', /^node:/],
];

export interface CategoryTime {
  readonly category: string;
  readonly ms: number;
  /** Share of the non-idle time. */
  readonly share: number;
}

export interface FunctionTime {
  readonly fn: string;
  readonly where: string;
  readonly category: string;
  readonly ms: number;
  readonly share: number;
}

export interface ProfileSummary {
  readonly file: string;
  readonly wallMs: number;
  /** Sampled time that was not idle (≈ CPU time on the main thread). */
  readonly busyMs: number;
  readonly categories: readonly CategoryTime[];
  readonly topFunctions: readonly FunctionTime[];
}

function categoryOf(frame: CallFrame): string {
  const key = frame.url || frame.functionName;
  for (const [name, re] of CATEGORIES) if (re.test(key)) return name;
  if (frame.functionName === '(program)') return 'program (native, unattributed)';
  return frame.url === '' ? 'native/builtins' : 'other';
}

function shortPath(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const apps = url.search(/\/(apps|streams|schemas)\//);
  return apps >= 0 ? url.slice(apps + 1) : url;
}

export function summariseProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const categories = new Map<string, number>();
  const functions = new Map<string, { fn: string; where: string; category: string; us: number }>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const category = categoryOf(frame);
    categories.set(category, (categories.get(category) ?? 0) + us);
    const where = frame.url ? `${shortPath(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName}@${where}`;
    const f = functions.get(key) ?? { fn: frame.functionName || '(anonymous)', where, category, us: 0 };
    f.us += us;
    functions.set(key, f);
  }
  const idleUs = categories.get('idle') ?? 0;
  const totalUs = [...categories.values()].reduce((a, b) => a + b, 0);
  const busyUs = Math.max(1, totalUs - idleUs);
  const ms = (us: number) => Math.round(us / 100) / 10;
  return {
    file,
    wallMs: ms(profile.endTime - profile.startTime),
    busyMs: ms(busyUs),
    categories: [...categories]
      .filter(([c]) => c !== 'idle')
      .sort((a, b) => b[1] - a[1])
      .map(([category, us]) => ({ category, ms: ms(us), share: Math.round((us / busyUs) * 1000) / 10 })),
    topFunctions: [...functions.values()]
      .filter((f) => f.category !== 'idle')
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ fn: f.fn, where: f.where, category: f.category, ms: ms(f.us), share: Math.round((f.us / busyUs) * 1000) / 10 })),
  };
}
