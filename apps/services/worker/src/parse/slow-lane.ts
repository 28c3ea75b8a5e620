/**
 * Where a slow parse's thread runs until it ends: at the CPU share other work leaves.
 *
 * Nice 19 orders threads within one scheduling group only. Where Linux groups tasks by session
 * (autogroups, `kernel.sched_autogroup_enabled=1`, the default on desktops and most servers), a
 * niced parse thread still weighs as much as Kafka, Postgres or another service — each a group of
 * its own — and a tenant's three slow pages take a core from everyone. A cgroup's CPU weight counts
 * across groups: with Linux's cgroup v1 `cpu` controller, which moves single threads (its `tasks`
 * file takes thread ids), a slow thread goes into a child group of the worker's own with the lowest
 * weight there is (`cpu.shares` 2 against the 1024 of every other group, and `cpu.idle` where the
 * kernel has it), and back into the worker's group when its parse ends.
 *
 * Where there is no such controller, or it cannot be written (not root, a read-only /sys in a
 * container, cgroup v2 only, whose threaded groups would change the whole process's group), there
 * is no lane: the pool holds slow threads back by nice 19 alone, and says so at start.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SlowLane {
  /** Where slow threads go: `cgroup <dir>`. */
  readonly kind: string;
  /** Moves the thread in; false when it could not (the thread keeps running as it was). */
  enter(tid: number): boolean;
  /** Moves the thread back to the worker's own group; false when it could not. */
  leave(tid: number): boolean;
}

/** The lowest weight cgroup v1 allows. */
const LOWEST_SHARES = 2;

/** A line of /proc/self/mountinfo: the mount point (5th field) and, after ` - `, the type and super options. */
export function cpuControllerMount(mountinfo: string): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right === undefined) continue;
    const [fstype, , superOptions = ''] = right.split(' ');
    if (fstype !== 'cgroup') continue;
    if (superOptions.split(',').includes('cpu')) return left!.split(' ')[4];
  }
  return undefined;
}

/** The process's group under the cpu controller, from /proc/self/cgroup (`N:cpu,cpuacct:/path`). */
export function cpuGroupOf(procCgroup: string): string | undefined {
  for (const line of procCgroup.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers?.split(',').includes('cpu')) return path;
  }
  return undefined;
}

export interface SlowLaneOptions {
  /** TRAWL_PARSE_SLOW_CGROUP: the group's directory; `off` for nice alone; unset for a child of the worker's own group. */
  readonly cgroup?: string;
  readonly mountinfo?: string;
  readonly procCgroup?: string;
}

/**
 * The cgroup lane when the controller is there and writable, else why not. The group is shared by
 * every worker in the same group (one name), so all their slow parses together share the one low
 * weight, and it stays when a worker ends, as a service manager's slices do: removing it while
 * another worker's slow thread is in it would fail, and one made again at every start costs nothing.
 */
export function cgroupLane(options: SlowLaneOptions = {}): { lane: SlowLane } | { reason: string } {
  if (options.cgroup === 'off') return { reason: 'TRAWL_PARSE_SLOW_CGROUP=off' };
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  const mount = cpuControllerMount(options.mountinfo ?? read('/proc/self/mountinfo'));
  const own = cpuGroupOf(options.procCgroup ?? read('/proc/self/cgroup'));
  if (mount === undefined || own === undefined) return { reason: 'no cgroup v1 cpu controller (it moves single threads; cgroup v2 moves whole processes)' };
  const home = join(mount, own);
  const dir = options.cgroup && options.cgroup.trim() !== '' ? options.cgroup : join(home, 'trawl-slow-parse');
  try {
    mkdirSync(dir, { recursive: true });
    // An idle group (made by a worker before) refuses a weight; one not idle gets the lowest first.
    if (read(join(dir, 'cpu.idle')).trim() !== '1') {
      writeFileSync(join(dir, 'cpu.shares'), String(LOWEST_SHARES));
      try {
        writeFileSync(join(dir, 'cpu.idle'), '1');
      } catch {
        // Kernels before 5.15 have no cpu.idle; the lowest shares alone hold the thread back.
      }
    }
  } catch (err) {
    return { reason: `${dir} cannot be made (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  const move = (tasks: string, tid: number) => {
    try {
      writeFileSync(tasks, String(tid));
      return true;
    } catch {
      // ESRCH: the thread ended meanwhile; anything else leaves it where it was.
      return false;
    }
  };
  return {
    lane: {
      kind: `cgroup ${dir}`,
      enter: (tid) => move(join(dir, 'tasks'), tid),
      leave: (tid) => move(join(home, 'tasks'), tid),
    },
  };
}
