/** Medians and spreads over rounds, per contender, and the ratios the targets are stated in. */
import type { GroupUsage } from '../measure/process-sampler.ts';
import { round } from '../measure/process-sampler.ts';

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function spread(values: readonly number[]): Spread {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { median: round(median, 2), min: round(v[0]!, 2), max: round(v[v.length - 1]!, 2), n: v.length };
}

export interface RoundLike {
  readonly contender: string;
  readonly pages: number;
  readonly seconds: number;
  readonly pagesPerSecond: number;
  readonly processes: readonly GroupUsage[];
}

export interface ContenderSummary {
  readonly contender: string;
  readonly rounds: number;
  readonly pagesPerSecond: Spread;
  readonly seconds: Spread;
  /** CPU seconds of the contender's own processes (not the shared broker/Postgres/site), per round. */
  readonly ownCpuSeconds: Spread;
  /** Own CPU per page, ms. */
  readonly cpuMsPerPage: Spread;
  /** Per process label: the median CPU seconds and the highest peak RSS over the rounds. */
  readonly processes: Readonly<Record<string, { readonly cpuSeconds: number; readonly peakRssMb: number; readonly shared: boolean }>>;
}

const NOT_OWN = new Set(['site server']);

export function summarise(contender: string, runs: readonly RoundLike[]): ContenderSummary {
  const own = (r: RoundLike) => r.processes.filter((p) => !p.shared && !NOT_OWN.has(p.label)).reduce((a, p) => a + p.cpuSeconds, 0);
  const labels = [...new Set(runs.flatMap((r) => r.processes.map((p) => p.label)))];
  const processes: Record<string, { cpuSeconds: number; peakRssMb: number; shared: boolean }> = {};
  for (const label of labels) {
    const of = runs.flatMap((r) => r.processes.filter((p) => p.label === label));
    processes[label] = {
      cpuSeconds: spread(of.map((p) => p.cpuSeconds)).median,
      peakRssMb: Math.max(...of.map((p) => p.peakRssMb)),
      shared: of[0]?.shared ?? false,
    };
  }
  return {
    contender,
    rounds: runs.length,
    pagesPerSecond: spread(runs.map((r) => r.pagesPerSecond)),
    seconds: spread(runs.map((r) => r.seconds)),
    ownCpuSeconds: spread(runs.map(own)),
    cpuMsPerPage: spread(runs.map((r) => (own(r) * 1000) / Math.max(1, r.pages))),
    processes,
  };
}

/** a/b of the medians, two decimals. */
export function ratio(a: Spread | undefined, b: Spread | undefined): number | null {
  if (!a || !b || !Number.isFinite(a.median) || !Number.isFinite(b.median) || b.median === 0) return null;
  return round(a.median / b.median, 2);
}
