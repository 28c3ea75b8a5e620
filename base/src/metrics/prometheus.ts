/**
 * Metrics through prom-client: every service's `/metrics` renders one prom-client `Registry`
 * (`defaultMetrics`, prom-client's global one, unless a caller passes its own). Several consumers
 * in one process share a metric by name, each under its own labels, so metrics are looked up
 * before they are made.
 *
 * Gauges that describe live state (lag, in-flight) are read from collectors at scrape time rather
 * than set on every change, so the hot path pays nothing for them.
 */
import { Counter, Gauge, Histogram, Registry, register, type LabelValues } from 'prom-client';

export { Registry as MetricsRegistry } from 'prom-client';

/** The process-wide registry every consumer, projection and producer reports to unless given another. */
export const defaultMetrics: Registry = register;

export type Labels = LabelValues<string>;
export type Sample = readonly [Labels, number];
export type Collector = () => Iterable<Sample>;

function existing<M>(registry: Registry, name: string, kind: abstract new (...args: never[]) => M, labelNames: readonly string[]): M | undefined {
  const found = registry.getSingleMetric(name);
  if (found === undefined) return undefined;
  if (!(found instanceof kind)) throw new TypeError(`metric ${name} already exists as another type`);
  const had = (found as unknown as { labelNames: string[] }).labelNames;
  if (had.join(',') !== labelNames.join(',')) throw new TypeError(`metric ${name} already exists with labels ${had.join(',')}, not ${labelNames.join(',')}`);
  return found;
}

/** The counter of that name in `registry`, made on first use. */
export function counterIn(registry: Registry, name: string, help: string, labelNames: readonly string[]): Counter<string> {
  return existing(registry, name, Counter<string>, labelNames) ?? new Counter({ name, help, labelNames, registers: [registry] });
}

export function gaugeIn(registry: Registry, name: string, help: string, labelNames: readonly string[]): Gauge<string> {
  return existing(registry, name, Gauge<string>, labelNames) ?? new Gauge({ name, help, labelNames, registers: [registry] });
}

export function histogramIn(registry: Registry, name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Histogram<string> {
  return existing(registry, name, Histogram<string>, labelNames) ?? new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}

const collectors = new WeakMap<Gauge<string>, Set<Collector>>();

/**
 * A gauge whose samples come from collectors read at scrape time; `add` returns the collector's
 * remover (its samples go with it).
 */
export function liveGaugeIn(registry: Registry, name: string, help: string, labelNames: readonly string[]): { add(collector: Collector): () => void } {
  let gauge = existing(registry, name, Gauge<string>, labelNames);
  if (!gauge) {
    const set = new Set<Collector>();
    gauge = new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect(this: Gauge<string>) {
        this.reset();
        for (const collect of set) for (const [labels, value] of collect()) this.set(labels, value);
      },
    });
    collectors.set(gauge, set);
  }
  const set = collectors.get(gauge);
  if (!set) throw new TypeError(`gauge ${name} is not a live gauge`);
  return {
    add(collector) {
      set.add(collector);
      return () => set.delete(collector);
    },
  };
}

/** Handler and batch durations, in seconds: 1 ms to 2 minutes (a page fetch with retries in place). */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;

/**
 * The resolution of the event-loop delay histogram behind `collectDefaultMetrics`'s
 * `nodejs_eventloop_lag_*` (TRAWL_EVENT_LOOP_SAMPLE_MS, default 1000 ms). prom-client's 10 ms is a
 * timer firing a hundred times a second in every process for as long as it runs — half a percent of
 * a core each on the 2-core dev box, most of an idle service's cost — and nothing reads those
 * figures at that grain: a stall shows at any resolution (a late timer is late), and `/healthz`
 * judges the loop with its own 1 s tick.
 */
export function eventLoopSampleMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_EVENT_LOOP_SAMPLE_MS;
  if (raw === undefined || raw.trim() === '') return 1_000;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms < 1) throw new RangeError(`TRAWL_EVENT_LOOP_SAMPLE_MS must be a whole number of ms ≥ 1, got "${raw}"`);
  return ms;
}
