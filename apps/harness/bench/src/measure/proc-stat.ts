/**
 * CPU time and memory of a process from /proc (Linux), read from outside: the one way to measure
 * Kafka's and Postgres's share, and the same way for every contender so the figures compare.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat. 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

export interface ProcSample {
  /** utime + stime, seconds. */
  readonly cpuSeconds: number;
  /** Resident set size now, MB. */
  readonly rssMb: number;
  /** Peak resident set size since the process started (VmHWM), MB. */
  readonly peakRssMb: number;
}

/** A sample of `pid`, or null once the process is gone. */
export function sampleProc(pid: number): ProcSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { cpuSeconds, rssMb: kbField(status, 'VmRSS') / 1024, peakRssMb: kbField(status, 'VmHWM') / 1024 };
  } catch {
    return null;
  }
}

function kbField(status: string, name: string): number {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

/** Pids whose command line contains `needle` (the Kafka broker, Postgres backends): read-only. */
export function findPids(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(needle)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU seconds of the whole machine (all cores, all processes), from /proc/stat: how busy it was. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

/** Every process below `root` in the process tree (Chromium's renderers under a worker). */
export function descendantPids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Context switches of every thread of `pid` so far (voluntary + not): how often it woke up. 0 once gone. */
export function contextSwitches(pid: number): number {
  let n = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        n += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      } catch {
        // thread gone meanwhile
      }
    }
  } catch {
    // process gone
  }
  return n;
}
