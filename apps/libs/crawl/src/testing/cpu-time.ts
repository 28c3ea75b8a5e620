/**
 * The CPU time a synchronous piece of work costs this process, for tests that bound what a hostile
 * page or pattern can cost a worker. CPU time, not wall time: a bound on wall time fails whenever
 * the machine is busy with something else, while the property under test — linear work, no
 * runaway backtracking or re-reading — shows in the CPU the work itself uses.
 */
export interface Measured<T> {
  readonly value: T;
  /** User + system CPU of this process during `run`, in ms. */
  readonly cpuMs: number;
  readonly wallMs: number;
}

export function measureCpu<T>(run: () => T): Measured<T> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const value = run();
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { value, cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}
