/**
 * The slow lane on a real thread: where the cgroup v1 cpu controller is there and writable (root),
 * a thread moved in is in the lowest-weight group and, moved back, in the process's own group again.
 */
import { readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cgroupLane, cpuControllerMount, cpuGroupOf } from './slow-lane.ts';

const mount = cpuControllerMount(readFileSync('/proc/self/mountinfo', 'utf8'));
const own = cpuGroupOf(readFileSync('/proc/self/cgroup', 'utf8'));
const dir = mount !== undefined && own !== undefined ? join(mount, own, `trawl-slow-lane-test-${process.pid}`) : undefined;
const made = dir === undefined ? { reason: 'no cgroup v1 cpu controller' } : cgroupLane({ cgroup: dir });
if (!('lane' in made)) console.info(`skipping: ${made.reason}`);

describe.skipIf(!('lane' in made))('the slow lane', () => {
  it('moves a thread into the lowest-weight group and back, and a second lane on the same group works too', async () => {
    const lane = (made as Extract<typeof made, { lane: unknown }>).lane;
    const tasks = (d: string) => readFileSync(join(d, 'tasks'), 'utf8').split('\n').filter(Boolean).map(Number);
    // A thread that says its id and waits to be told to end.
    const thread = new Worker("const { parentPort } = require('node:worker_threads'); parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self')); parentPort.once('message', () => process.exit(0));", { eval: true });
    try {
      const tid = Number(String(await new Promise((resolve) => thread.once('message', resolve))).split('/').pop());
      expect(lane.enter(tid)).toBe(true);
      expect(tasks(dir!)).toEqual([tid]);
      expect(lane.leave(tid)).toBe(true);
      expect(tasks(dir!)).toEqual([]);
      expect(tasks(join(mount!, own!))).toContain(tid);
      // A worker started later finds the group made (idle, so it refuses a weight) and uses it as it is.
      const again = cgroupLane({ cgroup: dir! });
      expect('lane' in again && again.lane.enter(tid)).toBe(true);
      expect(tasks(dir!)).toEqual([tid]);
      expect('lane' in again && again.lane.leave(tid)).toBe(true);
      // A thread that has ended cannot be moved: false, nothing thrown.
      thread.postMessage('end');
      await new Promise((resolve) => thread.once('exit', resolve));
      expect(lane.enter(tid)).toBe(false);
    } finally {
      await thread.terminate();
      rmdirSync(dir!);
    }
  });
});
