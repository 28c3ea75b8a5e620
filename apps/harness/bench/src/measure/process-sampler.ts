/**
 * Watches named groups of processes over one measured run: CPU seconds spent during the run
 * (difference of /proc readings) and the peak RSS seen (sampled every `intervalMs`; VmHWM would
 * be the peak since the process started, which spans earlier rounds for long-running services).
 *
 * A group is a label with a way to list its pids, re-listed at every sample: Postgres backends
 * come and go, and a group's figures are the sum over its processes.
 */
import { sampleProc } from './proc-stat.ts';

export interface ProcessGroup {
  readonly label: string;
  readonly pids: () => readonly number[];
  /** Shared with other work on the machine (the broker, Postgres): indicative only. */
  readonly shared?: boolean;
}

export interface GroupUsage {
  readonly label: string;
  readonly cpuSeconds: number;
  /** Peak of the group's summed RSS during the run, MB. */
  readonly peakRssMb: number;
  readonly shared: boolean;
}

export class ProcessSampler {
  private readonly startCpu = new Map<number, number>();
  private readonly lastCpu = new Map<number, number>();
  private readonly peak = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly groups: readonly ProcessGroup[],
    private readonly intervalMs = 200,
  ) {}

  start(): void {
    for (const g of this.groups) {
      for (const pid of g.pids()) {
        const s = sampleProc(pid);
        if (s) this.startCpu.set(pid, s.cpuSeconds);
      }
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops sampling and returns what each group used since start(). */
  stop(): GroupUsage[] {
    clearInterval(this.timer);
    this.sample();
    return this.groups.map((g) => {
      let cpu = 0;
      for (const pid of g.pids()) cpu += (this.lastCpu.get(pid) ?? 0) - (this.startCpu.get(pid) ?? 0);
      return { label: g.label, cpuSeconds: round(cpu, 2), peakRssMb: round(this.peak.get(g.label) ?? 0, 1), shared: g.shared ?? false };
    });
  }

  private sample(): void {
    for (const g of this.groups) {
      let rss = 0;
      for (const pid of g.pids()) {
        const s = sampleProc(pid);
        if (!s) continue;
        // A process that appeared after start() counts from its first sighting.
        if (!this.startCpu.has(pid)) this.startCpu.set(pid, s.cpuSeconds);
        this.lastCpu.set(pid, s.cpuSeconds);
        rss += s.rssMb;
      }
      this.peak.set(g.label, Math.max(this.peak.get(g.label) ?? 0, rss));
    }
  }
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
