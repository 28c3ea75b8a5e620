/**
 * The parse pool on real threads: a page parses there as it does in-line, a parse past its limit
 * has its thread stopped and fails its page alone, and the pool goes on serving other pages.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidSpecError, parsePage, ParseCrashedError, ParseTimeoutError, DEFAULT_PARSE_LIMITS, type ParseJob } from '@trawl/crawl';
import { samples, type CrawlSpec } from '@trawl/schemas';
import { Registry } from 'prom-client';
import { existsSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { mayRaisePriority, ParsePool } from './parse-pool.ts';
import { cgroupLane, cpuControllerMount, cpuGroupOf } from './slow-lane.ts';

const spec = (overrides: Partial<CrawlSpec>): CrawlSpec => ({ ...samples.FetchRequested.spec!, include_patterns: [], exclude_patterns: [], allowed_hosts: [], ...overrides });
const jobsPage = spec({ item_root: '.job', item_fields: [{ name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] }, { name: 'link', selector: 'a', attribute: 'href', xpath: null, transforms: [] }], next_link_selector: 'a.next', pagination_type: 'next_link' });
const listing = '<html><body>' + Array.from({ length: 20 }, (_, i) => `<div class="job"><h2>Job ${i}</h2><a href="/jobs/${i}">more</a></div>`).join('') + '<a class="next" href="/?page=2">next</a></body></html>';
/** A selector the API lets through whose cost grows with the square of a list: 40,000 siblings take seconds. */
const slowPage = '<html><body><div>' + '<b>x</b>'.repeat(40_000) + '</div></body></html>';
const slowSpec = spec({ item_root: 'b:nth-last-child(3)', item_fields: [{ name: 't', selector: '', attribute: null, xpath: null, transforms: [] }] });

const job = (html: string, s: CrawlSpec, jobId: string): ParseJob => ({ html, url: 'http://jobs.test/', finalUrl: 'http://jobs.test/', jobId, spec: s, limits: DEFAULT_PARSE_LIMITS });

const metrics = new Registry();
// These pools keep slow parses out of the lowest-weight cgroup (slowCgroup 'off'; the lane has a test
// of its own below): they are about turns and limits, and in the lane a slow parse gets only the CPU
// others leave, which on a machine busy with other suites can be none for minutes.
const off = { slowCgroup: 'off' } as const;
const pool = new ParsePool({ threads: 2, timeoutMs: 400, memoryMb: 64, idleTimeoutMs: 5_000, ...off }, undefined, metrics);
afterAll(() => pool.close());

describe('ParsePool', () => {
  it('gives what parsePage gives in-line', async () => {
    const threaded = await pool.parse(job(listing, jobsPage, 'job-a'));
    const inline = parsePage({ html: listing, url: 'http://jobs.test/', finalUrl: 'http://jobs.test/', spec: jobsPage });
    expect(threaded).toEqual({ links: inline.links, nextPage: inline.nextPage, canonical: inline.canonical, items: inline.items, cut: inline.cut, metadata: inline.metadata, simhash: inline.simhash, downloads: inline.downloads, derived: null });
    expect(threaded.items).toHaveLength(20);
    expect(threaded.nextPage).toBe('http://jobs.test/?page=2');
  });

  it('stops a parse past its limit and fails that page alone, while other pages parse', async () => {
    const started = performance.now();
    const slow = pool.parse(job(slowPage, slowSpec, 'hostile')).then(() => null, (err: unknown) => err);
    const others = Array.from({ length: 20 }, (_, i) => pool.parse(job(listing, jobsPage, `bystander-${i % 2}`)));
    const done = await Promise.all(others);
    expect(done.every((p) => p.items.length === 20)).toBe(true);
    const failure = await slow;
    expect(failure).toBeInstanceOf(ParseTimeoutError);
    expect(failure).toMatchObject({ code: 'TRAWL_PARSE_TIMEOUT', retriable: false });
    // (A ParseTimeoutError means the run was cut while it ran: a parse that ended first answers.)
    console.info(`slow parse stopped after ${Math.round(performance.now() - started)} ms (limit 400 ms)`);
    // The pool goes on with a new thread.
    expect((await pool.parse(job(listing, jobsPage, 'after'))).items).toHaveLength(20);
    expect(await metrics.getSingleMetricAsString('trawl_parse_stopped_total')).toMatch(/reason="timeout"} 1/);
  });

  it('slow parses give their threads back to other jobs\' pages while they run', { timeout: 60_000 }, async () => {
    const registry = new Registry();
    // A limit long enough for threads to start under tsx (seconds here; ~0.1 s compiled) on a busy machine.
    const shared = new ParsePool({ threads: 2, timeoutMs: 25_000, memoryMb: 64, idleTimeoutMs: 5_000, ...off }, undefined, registry);
    try {
      const settled: string[] = [];
      // Two slow pages of two jobs take both threads first.
      const slow = [1, 2].map((n) => shared.parse(job(slowPage, slowSpec, `hostile-${n}`)).then(() => settled.push('slow'), () => settled.push('slow')));
      await new Promise((r) => setTimeout(r, 50));
      const others = Array.from({ length: 20 }, () => shared.parse(job(listing, jobsPage, 'bystander')).then(() => settled.push('other')));
      await Promise.all(others);
      // Every other page was parsed while both slow ones still ran (they would run for seconds).
      expect(settled).toEqual(Array(20).fill('other'));
      // Both stepped aside while still running: one slot was enough for the other pages, so the
      // second may have been marked after them (its thread started it later).
      await expect.poll(() => registry.getSingleMetricAsString('trawl_parse_slow_total'), { timeout: 10_000 }).toMatch(/trawl_parse_slow_total 2/);
      expect(settled).toEqual(Array(20).fill('other'));
      await shared.close();
      await Promise.all(slow);
    } finally {
      await shared.close();
    }
  });

  it("threads are shared by user: one user's ten jobs do not go ahead of another user's one page", async () => {
    // The pages' users, by their signals, as the worker's fetch slots know them (FetchSlots.turnOf).
    const users = new WeakMap<AbortSignal, { tenant: string; job: string }>();
    const single = new ParsePool({ threads: 1, timeoutMs: 20_000, memoryMb: 64, idleTimeoutMs: 5_000, ...off }, undefined, new Registry(), (signal) => (signal ? users.get(signal) : undefined));
    const page = (tenant: string, jobId: string) => {
      const signal = new AbortController().signal;
      users.set(signal, { tenant, job: jobId });
      return { signal };
    };
    try {
      const done: string[] = [];
      const pages = Array.from({ length: 10 }, (_, i) => single.parse(job(listing, jobsPage, `many-${i}`), page('mallory', `many-${i}`)).then(() => done.push(`many-${i}`)));
      pages.push(single.parse(job(listing, jobsPage, 'one'), page('alice', 'one')).then(() => done.push('one')));
      await Promise.all(pages);
      // One thread: the first page ran at once, then the other user's turn. Per job, it came last (ten jobs ahead, each never served).
      expect(done.slice(0, 2)).toEqual(['many-0', 'one']);
    } finally {
      await single.close();
    }
  });

  it('stops a parse when the page\'s own signal aborts, with its reason', async () => {
    const budget = new AbortController();
    const slow = pool.parse(job(slowPage, slowSpec, 'budgeted'), { signal: budget.signal });
    setTimeout(() => budget.abort(new Error('page budget over')), 50);
    await expect(slow).rejects.toThrow('page budget over');
  });

  it('a parse over the thread\'s heap loses its thread, not the process', async () => {
    const small = new ParsePool({ threads: 1, timeoutMs: 20_000, memoryMb: 40, idleTimeoutMs: 1_000, ...off }, undefined, new Registry());
    try {
      const big = '<html><body>' + '<div class="job"><h2>title</h2><a href="/x">more</a></div>'.repeat(150_000) + '</body></html>';
      await expect(small.parse(job(big, jobsPage, 'big'))).rejects.toBeInstanceOf(ParseCrashedError);
      expect((await small.parse(job(listing, jobsPage, 'after'))).items).toHaveLength(20);
    } finally {
      await small.close();
    }
  });

  it('a spec whose selectors cannot be used comes back as InvalidSpecError', async () => {
    await expect(pool.parse(job(listing, spec({ item_root: 'li ~ li', item_fields: [{ name: 't', selector: '', attribute: null, xpath: null, transforms: [] }] }), 'invalid'))).rejects.toBeInstanceOf(InvalidSpecError);
  });

  it('lowers slow parses only where it may raise their thread back (CAP_SYS_NICE)', () => {
    expect(mayRaisePriority('Name:\tnode\nCapEff:\t000001ffffffffff\n')).toBe(true);
    expect(mayRaisePriority('Name:\tnode\nCapEff:\t0000000000000000\n')).toBe(false);
    expect(mayRaisePriority('CapEff:\t0000000000800000\n')).toBe(true);
    expect(mayRaisePriority('')).toBe(false);
  });

  it('finds the cgroup v1 cpu controller and the process\'s group in it, and none on cgroup v2 alone', () => {
    const v1 = [
      '30 25 0:26 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct',
      '33 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset',
    ].join('\n');
    expect(cpuControllerMount(v1)).toBe('/sys/fs/cgroup/cpu,cpuacct');
    expect(cpuGroupOf('5:cpuset:/\n4:cpu,cpuacct:/system.slice/trawl.service\n0::/')).toBe('/system.slice/trawl.service');
    expect(cpuControllerMount('35 25 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate')).toBeUndefined();
    expect(cpuGroupOf('0::/user.slice')).toBeUndefined();
    expect(cgroupLane({ mountinfo: '35 25 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw', procCgroup: '0::/' })).toEqual({ reason: expect.stringMatching(/no cgroup v1 cpu controller/) });
    expect(cgroupLane({ cgroup: 'off' })).toEqual({ reason: 'TRAWL_PARSE_SLOW_CGROUP=off' });
  });

  // Where the controller is there and writable (root on a cgroup v1 machine): the thread of a slow
  // parse is in the lowest-weight group while it runs, and gone from it when it is stopped (the
  // move back of a thread that answers is slow-lane.test.ts's).
  const mount = cpuControllerMount(readFileSync('/proc/self/mountinfo', 'utf8'));
  const own = cpuGroupOf(readFileSync('/proc/self/cgroup', 'utf8'));
  const laneDir = mount !== undefined && own !== undefined ? join(mount, own, `trawl-slow-parse-test-${process.pid}`) : undefined;
  const probe = laneDir === undefined ? { reason: 'no cgroup v1 cpu controller' } : cgroupLane({ cgroup: laneDir });
  if (!('lane' in probe)) console.info(`skipping the slow-lane test: ${probe.reason}`);
  it.skipIf(!('lane' in probe))('moves a slow parse\'s thread into the lowest-weight cgroup while it runs', async () => {
    const registry = new Registry();
    const lane = new ParsePool({ threads: 1, timeoutMs: 100_000, memoryMb: 64, idleTimeoutMs: 5_000, slowCgroup: laneDir! }, undefined, registry);
    const tasks = () => readFileSync(join(laneDir!, 'tasks'), 'utf8').split('\n').filter(Boolean).map(Number);
    const budget = new AbortController();
    try {
      // 2, the lowest weight; 3 where cpu.idle=1 took (an idle group reads as SCHED_IDLE's weight).
      expect(Number(readFileSync(join(laneDir!, 'cpu.shares'), 'utf8'))).toBeLessThanOrEqual(3);
      const slow = lane.parse(job(slowPage, slowSpec, 'slow'), { signal: budget.signal }).catch((err: unknown) => err);
      await expect.poll(() => registry.getSingleMetricAsString('trawl_parse_slow_total'), { timeout: 20_000 }).toMatch(/trawl_parse_slow_total 1/);
      const inLane = tasks();
      expect(inLane).toHaveLength(1);
      expect(existsSync(`/proc/self/task/${inLane[0]}`)).toBe(true);
      budget.abort(new Error('page budget over'));
      expect(await slow).toMatchObject({ message: 'page budget over' });
      await expect.poll(tasks, { timeout: 10_000 }).toEqual([]);
    } finally {
      await lane.close();
      rmdirSync(laneDir!);
    }
  });
});
