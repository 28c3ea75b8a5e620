/**
 * Replay progress for people: events applied, rate, and lag (events between the replay's position
 * and the end of the log), on stderr at most once a second, plus one line per phase. Stdout
 * stays free for the final report.
 */
export type ReplayPhase = 'prepare' | 'catch-up' | 'index' | 'swap' | 'done';

export interface ReplayProgress {
  readonly phase: ReplayPhase;
  readonly events: number;
  readonly eventsPerSecond: number;
  readonly lag: number;
  readonly elapsedMs: number;
  readonly note?: string;
}

export type ProgressSink = (p: ReplayProgress) => void;

export function stderrProgress(label: string): ProgressSink {
  return (p) => {
    const rate = Math.round(p.eventsPerSecond).toLocaleString('en-US');
    const note = p.note ? ` ${p.note}` : '';
    process.stderr.write(`replay ${label} [${p.phase}] ${p.events.toLocaleString('en-US')} events, ${rate} events/s, lag ${p.lag.toLocaleString('en-US')}${note}\n`);
  };
}

export class ProgressTracker {
  private readonly started = Date.now();
  private lastReport = 0;
  events = 0;
  lag = 0;
  phase: ReplayPhase = 'prepare';

  constructor(
    private readonly sink: ProgressSink | undefined,
    private readonly intervalMs = 1000,
  ) {}

  snapshot(note?: string): ReplayProgress {
    const elapsedMs = Date.now() - this.started;
    return { phase: this.phase, events: this.events, eventsPerSecond: elapsedMs > 0 ? (this.events * 1000) / elapsedMs : 0, lag: this.lag, elapsedMs, ...(note ? { note } : {}) };
  }

  /** Counts applied events; reports when the interval has passed. */
  add(events: number, lagDelta = events): void {
    this.events += events;
    this.lag = Math.max(0, this.lag - lagDelta);
    const now = Date.now();
    if (now - this.lastReport >= this.intervalMs) {
      this.lastReport = now;
      this.sink?.(this.snapshot());
    }
  }

  enter(phase: ReplayPhase, note?: string): void {
    this.phase = phase;
    this.lastReport = Date.now();
    this.sink?.(this.snapshot(note));
  }
}
