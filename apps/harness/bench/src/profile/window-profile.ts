/**
 * Where a process's CPU went during one stretch of its life (the idle window of bench:idle), from
 * a V8 `.cpuprofile`: self and inclusive time per function over the samples taken between two
 * instants. V8 stamps samples with the monotonic clock in microseconds (the clock of
 * `process.hrtime`, shared by every process on the machine), so the window is given in that clock.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
}

export interface WindowFunction {
  readonly name: string;
  readonly ms: number;
}

export interface WindowProfile {
  /** Sampled time in the window that was not idle, ms. */
  readonly busyMs: number;
  readonly self: readonly WindowFunction[];
  readonly inclusive: readonly WindowFunction[];
}

function label(n: ProfileNode): string {
  const file = n.callFrame.url.replace(/^.*\/(node_modules\/|apps\/|streams\/)/, '$1');
  return `${n.callFrame.functionName || '(anonymous)'} ${file}:${n.callFrame.lineNumber + 1}`;
}

/** Self and inclusive time of the samples between `fromUs` and `toUs` (monotonic µs). */
export function profileWindow(file: string, fromUs: number, toUs: number, top = 12): WindowProfile {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    // A sample stands for the time until the next one.
    const span = (p.timeDeltas[i + 1] ?? 0) / 1000;
    if (t < fromUs || t > toUs) continue;
    const node = byId.get(p.samples[i]!)!;
    const name = node.callFrame.functionName;
    if (name === '(idle)') continue;
    busy += span;
    self.set(label(node), (self.get(label(node)) ?? 0) + span);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const l = label(byId.get(id)!);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + span);
    }
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .filter(([name]) => !name.startsWith('(root)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms) }));
  return { busyMs: Math.round(busy), self: rank(self), inclusive: rank(inclusive) };
}
