import { describe, expect, it } from 'vitest';
import type { ProxySpec } from '@trawl/schemas';
import { InvalidConfigError } from '../errors.ts';
import { parseProxyUrl, ProxyPools, proxyPoolsOptionsFromEnv, ProxySpecError, type ProxyEndpoint } from './proxy-pool.ts';

const p = (url: string, username: string | null = null, password: string | null = null): ProxySpec => ({ url, username, password });
const THREE = [p('http://10.0.0.1:3128'), p('http://10.0.0.2:3128'), p('socks5://10.0.0.3:1080')];
const spec = (proxies: ProxySpec[], proxy_rotation: 'round_robin' | 'random' | 'per_session' = 'round_robin') => ({ proxies, proxy_rotation });

describe('ProxyPools', () => {
  it('goes direct without proxies or an operator default', () => {
    expect(new ProxyPools().pick('j1', spec([]))).toBeNull();
  });

  it('uses the operator default when the spec names none, and the spec’s own otherwise', () => {
    const pools = new ProxyPools({ defaultProxy: 'http://ops:pw@proxy.internal:8080' });
    const choice = pools.pick('j1', spec([]))!;
    expect(choice.proxy).toMatchObject({ host: 'proxy.internal', port: 8080, label: 'proxy.internal:8080', username: 'ops', password: 'pw', operator: true });
    expect(pools.pick('j2', spec([p('http://10.0.0.9:3128')]))!.proxy).toMatchObject({ label: '10.0.0.9:3128', operator: false });
  });

  it('round_robin takes each proxy in turn', () => {
    const pools = new ProxyPools();
    const labels = Array.from({ length: 6 }, () => pools.pick('j', spec(THREE))!.proxy.label);
    expect(labels).toEqual(['10.0.0.1:3128', '10.0.0.2:3128', '10.0.0.3:1080', '10.0.0.1:3128', '10.0.0.2:3128', '10.0.0.3:1080']);
  });

  it('random draws from the ready proxies', () => {
    const draws = [2, 0, 1];
    const pools = new ProxyPools({ randomInt: (n) => draws.shift()! % n });
    expect([0, 1, 2].map(() => pools.pick('j', spec(THREE, 'random'))!.proxy.label)).toEqual(['10.0.0.3:1080', '10.0.0.1:3128', '10.0.0.2:3128']);
  });

  it('per_session keeps a session on one proxy, spreads sessions, and moves only a benched proxy’s sessions', () => {
    let now = 1_000;
    const pools = new ProxyPools({ benchAfter: 1, benchMs: 10_000, now: () => now });
    const s = spec(THREE, 'per_session');
    const sessions = Array.from({ length: 30 }, (_, i) => `session-${i}`);
    const first = new Map(sessions.map((k) => [k, pools.pick('j', s, k)!.proxy.label]));
    for (const k of sessions) for (let i = 0; i < 3; i++) expect(pools.pick('j', s, k)!.proxy.label).toBe(first.get(k));
    expect(new Set(first.values()).size).toBe(3);
    // Bench one proxy: its sessions move, the others stay.
    const victim = pools.pick('j', s, 'session-0')!;
    pools.report(victim, 'error', 5);
    for (const k of sessions) {
      const now1 = pools.pick('j', s, k)!.proxy.label;
      if (first.get(k) === victim.proxy.label) expect(now1).not.toBe(victim.proxy.label);
      else expect(now1).toBe(first.get(k));
    }
    // Back from the bench: every session has its own proxy again.
    now += 10_001;
    for (const k of sessions) expect(pools.pick('j', s, k)!.proxy.label).toBe(first.get(k));
  });

  it('per_session replaces a retired session through another proxy than its predecessor’s, steadily, as rendezvous does for its first', () => {
    const pools = new ProxyPools();
    const s = spec(THREE, 'per_session');
    for (let session = 0; session < 20; session++) {
      // Generation 0 is plain rendezvous, as the string key `<session>.<generation>` gives.
      expect(pools.pick('j', s, { session, generation: 0 })!.proxy.label).toBe(pools.pick('j', s, `${session}.0`)!.proxy.label);
      for (let generation = 1; generation < 40; generation++) {
        const now = pools.pick('j', s, { session, generation })!.proxy.label;
        expect(now, `session ${session} generation ${generation}`).not.toBe(pools.pick('j', s, { session, generation: generation - 1 })!.proxy.label);
        expect(pools.pick('j', s, { session, generation })!.proxy.label).toBe(now);
      }
    }
    // Every proxy takes replacements: the avoidance does not pin them all on one.
    expect(new Set(Array.from({ length: 20 }, (_, session) => pools.pick('j', s, { session, generation: 1 })!.proxy.label)).size).toBe(3);
    // One proxy only: a replacement keeps it (a job that asked for proxies never goes direct).
    const one = spec([THREE[0]!], 'per_session');
    expect(pools.pick('k', one, { session: 0, generation: 3 })!.proxy.label).toBe('10.0.0.1:3128');
  });

  it('benches a proxy after N connect errors in a row, says so once, and brings it back after the bench time', () => {
    let now = 0;
    const benched: string[] = [];
    const outcomes: string[] = [];
    const pools = new ProxyPools({
      benchAfter: 3,
      benchMs: 60_000,
      now: () => now,
      observer: { benched: (jobId, proxy, failures, until) => benched.push(`${jobId} ${proxy.label} ${failures} ${until}`), outcome: (proxy, o) => outcomes.push(`${proxy.label} ${o}`) },
    });
    const s = spec(THREE.slice(0, 2));
    const bad = pools.pick('j', s)!;
    expect(bad.proxy.label).toBe('10.0.0.1:3128');
    pools.report(bad, 'error', 10);
    pools.report(bad, 'error', 10);
    pools.report(bad, 'ok', 10); // a success resets the count
    pools.report(bad, 'error', 10);
    pools.report(bad, 'error', 10);
    pools.report(bad, 'banned', 10); // a ban is the site's verdict, not a connect error
    expect(pools.isBenched('j', '10.0.0.1:3128')).toBe(false);
    pools.report(bad, 'error', 10);
    expect(pools.isBenched('j', '10.0.0.1:3128')).toBe(true);
    expect(benched).toEqual(['j 10.0.0.1:3128 3 60000']);
    // Said once in the job's log (on its next page), then not again.
    expect(pools.takeNotes('j')).toEqual(['proxy 10.0.0.1:3128 benched for 60 s after 3 connect errors in a row']);
    expect(pools.takeNotes('j')).toEqual([]);
    expect(outcomes.filter((o) => o.endsWith('banned'))).toHaveLength(1);
    // Benched for this job only; the others go on using it.
    expect(pools.isBenched('other', '10.0.0.1:3128')).toBe(false);
    for (let i = 0; i < 4; i++) expect(pools.pick('j', s)!.proxy.label).toBe('10.0.0.2:3128');
    now = 60_000;
    expect(new Set([0, 1, 2, 3].map(() => pools.pick('j', s)!.proxy.label))).toEqual(new Set(['10.0.0.1:3128', '10.0.0.2:3128']));
  });

  it('with every proxy benched uses the one back soonest, never going direct', () => {
    let now = 0;
    const pools = new ProxyPools({ benchAfter: 1, benchMs: 1_000, now: () => now });
    const s = spec(THREE.slice(0, 2));
    pools.report(pools.pick('j', s)!, 'error', 1); // .1 benched until 1000
    now = 500;
    pools.report(pools.pick('j', s)!, 'error', 1); // .2 benched until 1500
    expect(pools.pick('j', s)!.proxy.label).toBe('10.0.0.1:3128');
  });

  it('opens sealed credentials with the worker’s function, and refuses credentials in the URL', () => {
    const pools = new ProxyPools({ open: (sealed) => sealed.replace('tsec1.', 'open:') });
    const choice = pools.pick('j', spec([p('socks5://10.0.0.5:1080', 'tsec1.user', 'tsec1.pass')]))!;
    expect(choice.proxy).toMatchObject({ scheme: 'socks5:', username: 'open:user', password: 'open:pass' });
    expect(() => new ProxyPools({ open: (s) => s }).pick('j', spec([p('http://u:secret@10.0.0.5:3128')]))).toThrow(ProxySpecError);
    try {
      new ProxyPools().pick('j2', spec([p('http://u:secret@10.0.0.5:3128')]));
    } catch (err) {
      expect((err as Error).message).not.toContain('secret');
    }
    const failing = new ProxyPools({ open: () => { throw new Error('bad tag tsec1.x'); } });
    expect(() => failing.pick('j3', spec([p('http://10.0.0.5:3128', 'tsec1.x')]))).toThrow(/proxy 10.0.0.5:3128: its credentials are sealed and do not open/);
  });

  it('reads its settings from the environment and refuses a bad TRAWL_PROXY_URL without echoing it', () => {
    expect(proxyPoolsOptionsFromEnv({})).toEqual({ defaultProxy: null, benchAfter: 3, benchMs: 60_000 });
    expect(proxyPoolsOptionsFromEnv({ TRAWL_PROXY_URL: 'socks5://127.0.0.1:1080', TRAWL_PROXY_BENCH_AFTER: '5', TRAWL_PROXY_BENCH_MS: '1000' })).toEqual({ defaultProxy: 'socks5://127.0.0.1:1080', benchAfter: 5, benchMs: 1000 });
    expect(() => proxyPoolsOptionsFromEnv({ TRAWL_PROXY_URL: 'ftp://user:hunter2@x:21' })).toThrow(InvalidConfigError);
    expect(() => proxyPoolsOptionsFromEnv({ TRAWL_PROXY_URL: 'ftp://user:hunter2@x:21' })).not.toThrow(/hunter2/);
  });

  it('parses proxy URLs: schemes, default ports, IPv6', () => {
    expect(parseProxyUrl('socks5://[::1]')).toMatchObject({ scheme: 'socks5:', host: '::1', port: 1080 });
    expect(parseProxyUrl('https://proxy.example')).toMatchObject({ port: 443 });
    expect(() => parseProxyUrl('socks4://x:1')).toThrow(/scheme/);
    expect(() => parseProxyUrl('http://x:1/path')).toThrow(/no path/);
    const pools = new ProxyPools();
    const ep: ProxyEndpoint = pools.pick('j', spec([p('http://[2001:db8::1]:3128')]))!.proxy;
    expect(ep.label).toBe('[2001:db8::1]:3128');
  });
});
