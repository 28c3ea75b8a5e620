/**
 * What a soak prints at the end: a table of the faults injected (kind, target, count, recovery
 * time) and one of the invariants checked (checked, passed, failed), and the same as JSON.
 */
import type { Tally, Violation, InvariantName } from './checker.ts';
import type { Fault } from './nemesis.ts';
import type { UnplannedExit } from './services.ts';

export interface FaultRow {
  readonly kind: string;
  readonly target: string;
  readonly count: number;
  /** Faults whose part answered again within the limit. */
  readonly recovered: number;
  /** Heal begun → answering again. */
  readonly recoveryMedianMs: number | null;
  readonly recoveryMaxMs: number | null;
  /** Injected → answering again. */
  readonly outageMedianMs: number | null;
  readonly outageMaxMs: number | null;
}

export interface SoakReport {
  readonly seed: number;
  readonly minutes: number;
  readonly brokers: number;
  readonly startedAt: string;
  readonly elapsedSeconds: number;
  readonly faults: readonly FaultRow[];
  readonly faultLog: readonly Fault[];
  readonly invariants: Readonly<Record<InvariantName, Tally>>;
  readonly violations: readonly Violation[];
  /** Faults whose part did not answer again within the limit. */
  readonly unrecovered: number;
  /** Children that exited without the nemesis killing them (restarted by the keeper). */
  readonly unplannedExits: readonly Omit<UnplannedExit, 'tail'>[];
  readonly figures: Readonly<Record<string, number>>;
  /** Load averages (1, 5, 15 min) at the end. */
  readonly loadAverage: readonly number[];
  readonly ok: boolean;
}

const median = (xs: readonly number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
};

export function faultRows(faults: readonly Fault[]): FaultRow[] {
  const groups = new Map<string, Fault[]>();
  for (const f of faults) groups.set(`${f.kind}\t${f.target}`, [...(groups.get(`${f.kind}\t${f.target}`) ?? []), f]);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, fs]) => {
      const [kind, target] = key.split('\t') as [string, string];
      const times = fs.map((f) => f.recoveryMs).filter((ms): ms is number => typeof ms === 'number');
      const outages = fs.map((f) => f.outageMs).filter((ms): ms is number => typeof ms === 'number');
      return {
        kind, target, count: fs.length, recovered: times.length,
        recoveryMedianMs: median(times), recoveryMaxMs: times.length ? Math.max(...times) : null,
        outageMedianMs: median(outages), outageMaxMs: outages.length ? Math.max(...outages) : null,
      };
    });
}

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const seconds = (ms: number | null) => (ms === null ? '-' : `${(ms / 1_000).toFixed(1)} s`);

export function formatReport(r: SoakReport): string {
  const faults = table(
    ['kind', 'target', 'count', 'recovered', 'recovery median', 'recovery max', 'outage median', 'outage max'],
    r.faults.map((f) => [f.kind, f.target, String(f.count), String(f.recovered), seconds(f.recoveryMedianMs), seconds(f.recoveryMaxMs), seconds(f.outageMedianMs), seconds(f.outageMaxMs)]),
  );
  const invariants = table(
    ['invariant', '', 'checked', 'passed', 'failed'],
    Object.entries(r.invariants).map(([name, t]) => [name, '', String(t.checked), String(t.passed), String(t.failed)]),
  );
  const out = [
    `soak: ${r.minutes} min of load and faults, seed ${r.seed}, ${r.brokers} broker(s), ${Math.round(r.elapsedSeconds)} s in all, load average ${r.loadAverage.map((l) => l.toFixed(1)).join(' ')}`,
    '',
    `faults injected (${r.faultLog.length}; recovery: from the heal's start — process started, SIGCONT, \`stack up\` — until the part answers; outage: from the fault)`,
    faults,
    '',
    'invariants checked',
    invariants,
    '',
    `figures: ${Object.entries(r.figures).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `unplanned exits (restarted by the keeper): ${r.unplannedExits.length === 0 ? 'none' : r.unplannedExits.map((e) => `${e.slot} (code ${e.code}${e.signal ? `, ${e.signal}` : ''})`).join(', ')}`,
  ];
  if (r.unrecovered > 0) out.push(`faults whose part did not answer again: ${r.unrecovered}`);
  for (const v of r.violations) out.push(`VIOLATION ${v.invariant}${v.jobId ? ` job ${v.jobId}` : ''}: ${v.message}`);
  out.push(r.ok ? 'soak: no violation' : `soak: ${r.violations.length} violation(s), ${r.unrecovered} unrecovered fault(s)`);
  return out.join('\n');
}
