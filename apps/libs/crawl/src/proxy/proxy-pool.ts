import { createHash, randomInt } from 'node:crypto';
import type { CrawlSpec, ProxyRotation, ProxySpec } from '@trawl/schemas';
import { InvalidConfigError, InvalidSpecError, ProxyConnectError } from '../errors.ts';
import { envInteger } from '../config/env-integer.ts';

/** The schemes a proxy may have: HTTP(S) CONNECT proxies and SOCKS5 (names resolved by the proxy). */
export const PROXY_SCHEMES = ['http:', 'https:', 'socks5:'] as const;
export type ProxyScheme = (typeof PROXY_SCHEMES)[number];

/** One upstream proxy, opened: where it is and, in clear, its credentials (only ever in memory). */
export interface ProxyEndpoint {
  readonly scheme: ProxyScheme;
  /** Host name or IP literal, without brackets. */
  readonly host: string;
  readonly port: number;
  /** `host:port`: the proxy's name in logs and metric labels (never its credentials). */
  readonly label: string;
  readonly username: string | null;
  readonly password: string | null;
  /**
   * The operator's proxy (TRAWL_PROXY_URL) rather than a tenant's: it is the operator's own
   * configuration, so its address is not held to the tenant egress rules (it may be a proxy on
   * this machine or in the private network, which is the point of an egress proxy).
   */
  readonly operator: boolean;
}

/** What `pick` hands out: the proxy to use for one request, to be given back to `report`. */
export interface ProxyChoice {
  readonly jobId: string;
  readonly proxy: ProxyEndpoint;
}

export type ProxyOutcome = 'ok' | 'error' | 'banned';

/** A session of a job's pool, for `per_session`: its slot and generation (a session retired after a block is replaced by the slot's next generation). */
export interface ProxySessionKey {
  readonly session: number;
  readonly generation: number;
}

/** Generations of a slot followed back when a replacement avoids its predecessor's proxy; beyond, the chain starts afresh. */
const MAX_GENERATION_CHAIN = 32;

/** Opens a sealed (`tsec1.…`) credential of a spec; the worker passes one bound to its SecretBox. */
export type OpenSealed = (sealed: string) => string;

/** What the pools say about their proxies; the worker turns it into metrics and log lines. */
export interface ProxyObserver {
  /** Every outcome reported, with the latency of the request (ms). */
  outcome?(proxy: ProxyEndpoint, outcome: ProxyOutcome, latencyMs: number): void;
  /** A proxy of a job is benched after `failures` connect errors in a row, until `until` (epoch ms). */
  benched?(jobId: string, proxy: ProxyEndpoint, failures: number, until: number): void;
}

export interface ProxyPoolsOptions {
  /** Opens sealed credentials (the worker's CredentialOpener); without it they are taken as they are. */
  readonly open?: OpenSealed;
  /** The operator's default for every job without proxies of its own (TRAWL_PROXY_URL); null: direct. */
  readonly defaultProxy?: string | null;
  /** Connect errors in a row that bench a proxy (TRAWL_PROXY_BENCH_AFTER, default 3). */
  readonly benchAfter?: number;
  /** How long a benched proxy sits out (TRAWL_PROXY_BENCH_MS, default 60 s). */
  readonly benchMs?: number;
  /** Jobs whose pools are kept at once (least recently used dropped first). */
  readonly maxJobs?: number;
  readonly observer?: ProxyObserver;
  readonly now?: () => number;
  /** An integer in [0, n): crypto's by default, fixed in tests. */
  readonly randomInt?: (n: number) => number;
}

/** The proxy settings of the environment: TRAWL_PROXY_URL, TRAWL_PROXY_BENCH_AFTER, TRAWL_PROXY_BENCH_MS. */
export function proxyPoolsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Pick<ProxyPoolsOptions, 'defaultProxy' | 'benchAfter' | 'benchMs'> {
  const raw = env.TRAWL_PROXY_URL?.trim() ?? '';
  if (raw !== '') parseOperatorProxy(raw); // refused at start, not at the first fetch
  return {
    defaultProxy: raw === '' ? null : raw,
    benchAfter: envInteger(env, 'TRAWL_PROXY_BENCH_AFTER', 3, 1),
    benchMs: envInteger(env, 'TRAWL_PROXY_BENCH_MS', 60_000, 0),
  };
}

/** A proxy URL's scheme, host and port; throws an Error saying what is wrong (never echoing credentials). */
export function parseProxyUrl(raw: string): { scheme: ProxyScheme; host: string; port: number; username: string; password: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('not a URL');
  }
  const scheme = u.protocol as ProxyScheme;
  if (!(PROXY_SCHEMES as readonly string[]).includes(scheme)) throw new Error(`scheme ${u.protocol} is not one of http, https, socks5`);
  if (!u.hostname) throw new Error('no host');
  if ((u.pathname !== '' && u.pathname !== '/') || u.search || u.hash) throw new Error('a proxy URL is a scheme, a host and a port, with no path or query');
  const port = u.port ? Number(u.port) : scheme === 'https:' ? 443 : scheme === 'socks5:' ? 1080 : 80;
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return { scheme, host, port, username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
}

function parseOperatorProxy(raw: string): ProxyEndpoint {
  try {
    const p = parseProxyUrl(raw);
    return { scheme: p.scheme, host: p.host, port: p.port, label: labelOf(p.host, p.port), username: p.username || null, password: p.password || null, operator: true };
  } catch (err) {
    throw new InvalidConfigError(`TRAWL_PROXY_URL is not a proxy URL: ${(err as Error).message}`);
  }
}

function labelOf(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

interface ProxyState {
  readonly proxy: ProxyEndpoint;
  failures: number;
  benchedUntil: number;
}

/** One job's pool: its proxies with their failure counts, and the round-robin position. */
interface JobPool {
  readonly key: string;
  readonly rotation: ProxyRotation;
  readonly proxies: ProxyState[];
  next: number;
  /** Lines for the job's log not yet said (takeNotes). */
  notes: string[];
}

/** Notes kept per job until said (one page carries at most this many), and their length: they ride on a PageFetched, whose size is bounded. */
export const MAX_PAGE_NOTES = 5;
const MAX_NOTE_CHARS = 200;

/**
 * The proxies of every job a worker fetches for: a pool per job, built from the job's spec
 * (`proxies`, `proxy_rotation`) on its first pick, or the operator's TRAWL_PROXY_URL when the spec
 * names none. Credentials arrive sealed and are opened here, once per pool, into memory only.
 *
 * Rotation: `round_robin` takes the job's proxies in turn, `random` any of them, `per_session` a
 * stable one per session key (rendezvous hashing: a session keeps its proxy as long as that proxy
 * is in play, and only the sessions of a benched proxy move, each to its next best). A session
 * retired after a block is replaced through another proxy than the one it met the block through
 * (when another is ready): a ban is often the address's. Without a session key `per_session` goes
 * round robin.
 *
 * Benching: a proxy that fails to connect `benchAfter` times in a row sits out `benchMs` for that
 * job; a success resets its count. When all of a job's proxies are benched, the one back soonest is
 * used anyway — a job that asked for proxies never goes direct. `banned` (a block seen through the
 * proxy) is counted for metrics but does not bench: a site's ban says little about the proxy.
 */
export class ProxyPools {
  private readonly jobs = new Map<string, JobPool>();
  private readonly benchAfter: number;
  private readonly benchMs: number;
  private readonly maxJobs: number;
  private readonly now: () => number;
  private readonly random: (n: number) => number;
  private readonly operator: ProxyEndpoint | null;

  constructor(private readonly options: ProxyPoolsOptions = {}) {
    this.benchAfter = options.benchAfter ?? 3;
    this.benchMs = options.benchMs ?? 60_000;
    this.maxJobs = options.maxJobs ?? 1_000;
    this.now = options.now ?? Date.now;
    this.random = options.randomInt ?? ((n) => randomInt(n));
    this.operator = options.defaultProxy ? parseOperatorProxy(options.defaultProxy) : null;
  }

  /** The proxy for one request of `jobId`, or null to go direct (no proxies and no operator default). */
  pick(jobId: string, spec: Pick<CrawlSpec, 'proxies' | 'proxy_rotation'>, sessionKey?: string | ProxySessionKey | null): ProxyChoice | null {
    const pool = this.poolOf(jobId, spec);
    if (!pool) return null;
    const now = this.now();
    const ready = pool.proxies.filter((p) => p.benchedUntil <= now);
    let chosen: ProxyState;
    if (ready.length === 0) {
      chosen = pool.proxies.reduce((a, b) => (b.benchedUntil < a.benchedUntil ? b : a));
    } else if (pool.rotation === 'random') {
      chosen = ready[this.random(ready.length)]!;
    } else if (pool.rotation === 'per_session' && sessionKey) {
      chosen = typeof sessionKey === 'string' ? bestFor(sessionKey, ready) : generationProxy(sessionKey, ready);
    } else {
      chosen = ready[pool.next++ % ready.length]!;
    }
    return { jobId, proxy: chosen.proxy };
  }

  /**
   * How a request through `choice` went: `ok` (an HTTP answer came back through it, whatever its
   * status), `error` (no connection through the proxy: refused, timed out, 407, a SOCKS failure),
   * `banned` (the site answered a block page through it).
   */
  report(choice: ProxyChoice, outcome: ProxyOutcome, latencyMs: number): void {
    this.options.observer?.outcome?.(choice.proxy, outcome, latencyMs);
    const pool = this.jobs.get(choice.jobId);
    const state = pool?.proxies.find((p) => p.proxy === choice.proxy);
    if (!state) return;
    if (outcome === 'ok') {
      state.failures = 0;
      return;
    }
    if (outcome !== 'error') return;
    state.failures++;
    if (state.failures >= this.benchAfter && state.benchedUntil <= this.now()) {
      state.benchedUntil = this.now() + this.benchMs;
      this.options.observer?.benched?.(choice.jobId, state.proxy, state.failures, state.benchedUntil);
      const note = `proxy ${state.proxy.label} benched for ${Math.round(this.benchMs / 1000)} s after ${state.failures} connect errors in a row`;
      if (pool!.notes.length < MAX_PAGE_NOTES) pool!.notes.push(note.slice(0, MAX_NOTE_CHARS));
      state.failures = 0;
    }
  }

  /** Whether a proxy of a job sits out now (for tests and the job view). */
  isBenched(jobId: string, label: string): boolean {
    const state = this.jobs.get(jobId)?.proxies.find((p) => p.proxy.label === label);
    return state !== undefined && state.benchedUntil > this.now();
  }

  /** What the pool has to tell a job's log since it was last asked (a proxy benched), at most 5 lines; cleared. */
  takeNotes(jobId: string): readonly string[] {
    const pool = this.jobs.get(jobId);
    if (!pool || pool.notes.length === 0) return [];
    const notes = pool.notes;
    pool.notes = [];
    return notes;
  }

  /** Forgets a job's pool (the job ended). */
  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }

  private poolOf(jobId: string, spec: Pick<CrawlSpec, 'proxies' | 'proxy_rotation'>): JobPool | null {
    const list = spec.proxies ?? [];
    if (list.length === 0 && !this.operator) return null;
    const key = list.length === 0 ? 'operator' : JSON.stringify(list) + spec.proxy_rotation;
    const known = this.jobs.get(jobId);
    if (known && known.key === key) {
      // Most recently used last, so the first key is the one to drop.
      this.jobs.delete(jobId);
      this.jobs.set(jobId, known);
      return known;
    }
    const endpoints = list.length === 0 ? [this.operator!] : list.map((p) => this.endpointOf(p));
    const pool: JobPool = { key, rotation: spec.proxy_rotation ?? 'round_robin', proxies: endpoints.map((proxy) => ({ proxy, failures: 0, benchedUntil: 0 })), next: 0, notes: [] };
    if (this.jobs.size >= this.maxJobs) this.jobs.delete(this.jobs.keys().next().value!);
    this.jobs.set(jobId, pool);
    return pool;
  }

  private endpointOf(spec: ProxySpec): ProxyEndpoint {
    let parsed;
    try {
      parsed = parseProxyUrl(spec.url);
    } catch (err) {
      throw new ProxySpecError(`proxy ${safeText(spec.url)}: ${(err as Error).message}`);
    }
    if (parsed.username || parsed.password) throw new ProxySpecError(`proxy ${labelOf(parsed.host, parsed.port)}: credentials go in username/password, not in the URL`);
    const label = labelOf(parsed.host, parsed.port);
    return {
      scheme: parsed.scheme,
      host: parsed.host,
      port: parsed.port,
      label,
      username: spec.username ? this.openSealed(spec.username, label) : null,
      password: spec.password ? this.openSealed(spec.password, label) : null,
      operator: false,
    };
  }

  private openSealed(sealed: string, label: string): string {
    // Without an opener (unit tests, the in-memory bench) values are taken as they are, as request/credentials.ts does.
    if (!this.options.open) return sealed;
    try {
      return this.options.open(sealed);
    } catch (err) {
      // Says where the value sits, never what it holds.
      throw new ProxySpecError(`proxy ${label}: its credentials are sealed and do not open with this worker's keys (TRAWL_SECRETS_KEY, TRAWL_SECRETS_OLD_KEYS)`, { cause: err });
    }
  }
}

/** A job's proxies cannot be used as given (a bad URL, credentials that do not open): the page fails, not retried. */
export class ProxySpecError extends InvalidSpecError {}

/** Where the pool's users find it; it lives with the package's other errors. */
export { ProxyConnectError };

/** The ready proxy with the highest rendezvous weight for a session key. */
function bestFor(key: string, ready: readonly ProxyState[]): ProxyState {
  return ready.reduce((best, p) => (score(key, p.proxy.label) > score(key, best.proxy.label) ? p : best));
}

/**
 * The proxy of a slot's generation: its best by rendezvous (key `<session>.<generation>`), but not
 * the one the generation before took, as the ready proxies are now, when another is ready — so a
 * replacement never inherits its predecessor's proxy. Generation 0 is plain rendezvous.
 */
function generationProxy(key: ProxySessionKey, ready: readonly ProxyState[]): ProxyState {
  let previous: ProxyState | null = null;
  for (let g = Math.max(0, key.generation - MAX_GENERATION_CHAIN); g <= key.generation; g++) {
    const prev: ProxyState | null = previous;
    previous = bestFor(`${key.session}.${g}`, prev && ready.length > 1 ? ready.filter((p) => p !== prev) : ready);
  }
  return previous!;
}

/** The rendezvous weight of a proxy for a session: the highest wins, and stays the highest while it is in play. */
function score(sessionKey: string, label: string): number {
  return createHash('sha256').update(sessionKey).update('\0').update(label).digest().readUInt32BE(0);
}

/** A URL for a message, without its user info. */
function safeText(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return '(not a URL)';
  }
}
