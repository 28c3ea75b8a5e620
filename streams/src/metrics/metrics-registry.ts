/**
 * A small metrics registry with a Prometheus text renderer. Enough for counters and gauges with
 * labels, which is all the consumers need; no dependency, so apps expose `/metrics` by returning
 * `renderPrometheus()` with content type `text/plain; version=0.0.4`.
 *
 * Gauges that describe live state (lag, in-flight) are read from collectors at render time rather
 * than pushed on every change, so the hot path pays nothing for them.
 */

export type Labels = Readonly<Record<string, string | number>>;
export type Sample = readonly [Labels, number];

function labelKey(labels: Labels): string {
  return JSON.stringify(Object.keys(labels).sort().map((k) => [k, String(labels[k])]));
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatLabels(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${escapeLabelValue(String(labels[k]))}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

abstract class Metric {
  abstract readonly type: 'counter' | 'gauge';
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  abstract samples(): Sample[];
}

export class Counter extends Metric {
  readonly type = 'counter';
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new RangeError(`counter ${this.name} cannot go down`);
    const key = labelKey(labels);
    const slot = this.values.get(key);
    if (slot) slot.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }

  /**
   * An incrementer bound to one label set, for hot paths: it skips building the label key
   * (a sort and a JSON.stringify) on every call.
   */
  bind(labels: Labels): (by?: number) => void {
    const key = labelKey(labels);
    let slot = this.values.get(key);
    if (!slot) this.values.set(key, (slot = { labels: { ...labels }, value: 0 }));
    const bound = slot;
    return (by = 1) => {
      bound.value += by;
    };
  }

  /** The value for exactly these labels (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels))?.value ?? 0;
  }

  /** Sum over every label set that includes the given labels. */
  sum(match: Labels = {}): number {
    let total = 0;
    for (const { labels, value } of this.values.values()) {
      if (Object.entries(match).every(([k, v]) => String(labels[k]) === String(v))) total += value;
    }
    return total;
  }

  samples(): Sample[] {
    return [...this.values.values()].map(({ labels, value }) => [labels, value] as const);
  }
}

export type Collector = () => Iterable<Sample>;

export class Gauge extends Metric {
  readonly type = 'gauge';
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  private readonly collectors = new Set<Collector>();

  set(labels: Labels, value: number): void {
    this.values.set(labelKey(labels), { labels: { ...labels }, value });
  }

  /** Adds a source of samples read at render time; returns its remover. */
  collect(collector: Collector): () => void {
    this.collectors.add(collector);
    return () => this.collectors.delete(collector);
  }

  samples(): Sample[] {
    const out: Sample[] = [...this.values.values()].map(({ labels, value }) => [labels, value] as const);
    for (const collector of this.collectors) out.push(...collector());
    return out;
  }
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  /** The counter of that name, created on first use (so several consumers share one). */
  counter(name: string, help: string): Counter {
    return this.getOrCreate(name, () => new Counter(name, help), Counter);
  }

  gauge(name: string, help: string): Gauge {
    return this.getOrCreate(name, () => new Gauge(name, help), Gauge);
  }

  private getOrCreate<M extends Metric>(name: string, make: () => M, kind: abstract new (...args: never[]) => M): M {
    if (!NAME.test(name)) throw new RangeError(`invalid metric name ${name}`);
    const existing = this.metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind)) throw new TypeError(`metric ${name} already exists as a ${existing.type}`);
      return existing;
    }
    const metric = make();
    this.metrics.set(name, metric);
    return metric;
  }

  /** Prometheus text exposition format 0.0.4. */
  renderPrometheus(): string {
    const lines: string[] = [];
    for (const metric of [...this.metrics.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      lines.push(`# HELP ${metric.name} ${escapeHelp(metric.help)}`);
      lines.push(`# TYPE ${metric.name} ${metric.type}`);
      for (const [labels, value] of metric.samples()) lines.push(`${metric.name}${formatLabels(labels)} ${formatValue(value)}`);
    }
    return lines.length ? `${lines.join('\n')}\n` : '';
  }
}

/** The process-wide registry every consumer and projection reports to unless given another. */
export const defaultMetrics = new MetricsRegistry();

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
