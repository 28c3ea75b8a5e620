/**
 * The streams benchmark, side by side: kafkajs with Trawl's fast paths and without
 * (TRAWL_KAFKAJS_FAST_PATHS=0), in interleaved rounds of produce-consume.ts, each round a fresh
 * process. On a shared machine only figures taken this way compare: the same code measured 14,400
 * and 24,700 events/s an hour apart here.
 *
 *   npm run bench:ab -w @trawl/streams [-- --rounds 3]
 *
 * Prints each round, medians and ratios, and writes bench-results/streams-ab.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '@trawl/streams';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, events: { type: 'string', default: '200000' } } });
const ROUNDS = Number(values.rounds);
const VARIANTS = [
  { name: 'fast paths', env: { TRAWL_KAFKAJS_FAST_PATHS: '1' } },
  { name: 'kafkajs as released', env: { TRAWL_KAFKAJS_FAST_PATHS: '0' } },
] as const;

interface Run {
  readonly endToEndEventsPerSec: number;
  readonly cpuSecondsPer10kEvents: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number };
  readonly loadAverage1m: number;
}

function runOnce(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'produce-consume.ts')], {
      env: { ...process.env, ...env, BENCH_EVENTS: values.events, BENCH_LATENCY_EVENTS: '10000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"benchmark"'));
      if (code !== 0 || !line) reject(new Error(`bench round failed (exit ${code}):\n${out}`));
      else resolve(JSON.parse(line) as Run);
    });
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const runs = new Map<string, Run[]>(VARIANTS.map((v) => [v.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which goes first, so a drifting machine does not favour one.
    const order = round % 2 ? VARIANTS : [...VARIANTS].reverse();
    for (const v of order) {
      const run = await runOnce(v.env);
      runs.get(v.name)!.push(run);
      console.log(`round ${round}  ${v.name.padEnd(20)} ${run.endToEndEventsPerSec.toLocaleString('en').padStart(7)} events/s  ${run.cpuSecondsPer10kEvents.toFixed(3)} CPU-s/10k  p99 ${run.latencyMs.p99} ms  (load ${run.loadAverage1m})`);
    }
  }
  const summary = VARIANTS.map((v) => {
    const r = runs.get(v.name)!;
    const rates = r.map((x) => x.endToEndEventsPerSec);
    return {
      variant: v.name,
      env: v.env,
      eventsPerSecMedian: median(rates),
      eventsPerSecMin: Math.min(...rates),
      eventsPerSecMax: Math.max(...rates),
      cpuSecondsPer10kMedian: median(r.map((x) => x.cpuSecondsPer10kEvents)),
      latencyP99MsMedian: median(r.map((x) => x.latencyMs.p99)),
      runs: r,
    };
  });
  const [fast, plain] = summary as [(typeof summary)[0], (typeof summary)[0]];
  const result = {
    benchmark: 'streams.produce-consume.ab',
    at: new Date().toISOString(),
    rounds: ROUNDS,
    summary,
    throughputRatio: Math.round((fast.eventsPerSecMedian / plain.eventsPerSecMedian) * 100) / 100,
    cpuPerEventRatio: Math.round((fast.cpuSecondsPer10kMedian / plain.cpuSecondsPer10kMedian) * 100) / 100,
  };
  for (const s of summary) console.log(`${s.variant.padEnd(20)} median ${s.eventsPerSecMedian.toLocaleString('en')} events/s (${s.eventsPerSecMin.toLocaleString('en')}–${s.eventsPerSecMax.toLocaleString('en')}), ${s.cpuSecondsPer10kMedian} CPU-s per 10k events`);
  console.log(`fast / released: ${result.throughputRatio}× events/s, ${result.cpuPerEventRatio}× CPU per event`);
  console.log(JSON.stringify(result));
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'streams-ab.json'), `${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
