/**
 * A job's pool of sessions (CrawlSpec.sessions; a login with no pool size has one), as one worker
 * uses it. Each session has a cookie jar (session-jar.ts), a login state and a version; the state
 * lives in a SessionStore (the worker's: the compacted topic trawl.sessions), so that every worker,
 * and a worker that takes over after a crash, continues the same sessions.
 *
 * - Which session a fetch uses: a hash of its URL, modulo the pool size. A retry of the page, on
 *   any worker, uses the same session; a job's pages spread over the pool evenly.
 * - A login's requests go through the job's politeness (LeaseOptions.gate, login-gate.ts), taken
 *   by the login itself: the lease holds no host slot while it logs in.
 * - A login runs once per session, before the session's first page: one login at a time per
 *   session on this worker (the fetches waiting for it share it), and its result is saved before any
 *   page of the session is fetched. A session whose saved state says it is logged in is not logged
 *   in again — after a crash too: the worker that takes over reads the state the dead one saved.
 *   A worker killed between its login and the save logs in again once.
 * - A failed login is saved as failed: every later fetch of the session fails at once with the
 *   same LoginFailedError (the site is not asked again with credentials known to be wrong).
 * - After each fetch, cookies the responses set are saved (a new version) before the page's events
 *   are produced: a page never counts as done with its cookies only in a dead worker's memory.
 * - A session that meets a block is retired and replaced in its slot: a new generation, starting
 *   from the spec's cookies, logged out.
 *
 * What the store holds is the clear state; sealing it is the store's (the worker seals the jar with
 * TRAWL_SECRETS_KEY before it leaves the process). Nothing here logs a cookie or a credential.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { LoginFailedError } from '../errors.ts';
import type { BrowserCookie, RequestProfile } from '../request/request-profile.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import { logIn, type LoginDeps, type LoginGate } from './form-login.ts';
import { SessionJar } from './session-jar.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';

export type LoginState = 'none' | 'done' | 'failed';

/** One session's state, in clear (the store seals the jar). */
export interface SessionState {
  readonly jobId: string;
  readonly session: number;
  readonly generation: number;
  readonly version: number;
  /** SessionJar.serialize(); '' from a store that could not read the saved one: the session starts from the spec's cookies, logged out. */
  readonly jar: string;
  readonly login: LoginState;
  readonly logins: number;
  /** login, cookies, retired: <code>, or the failed login's reason (never a value). */
  readonly reason: string;
}

/** Where sessions' states are kept and read. */
export interface SessionStore {
  /** The latest state of the session known here (undefined: none saved yet). May wait, bounded, to be up to date for a job it has not seen. */
  load(jobId: string, session: number, options: { signal?: AbortSignal }): Promise<SessionState | undefined>;
  /** Saves a new state (durably: the promise resolves once it is). `causationId`: the fetch that changed it. */
  save(state: SessionState, causationId: string | null): Promise<void>;
}

/** What happened to sessions, for the worker's log and metrics. */
export type SessionEvent = { readonly kind: 'login' | 'login_failed' | 'retired' | 'resumed'; readonly jobId: string; readonly session: number; readonly generation: number; readonly reason: string };

export interface SessionPoolDeps extends LoginDeps {
  readonly store: SessionStore;
  readonly onEvent?: (event: SessionEvent) => void;
  /** Sessions kept in memory (LRU by use); default 10 000. */
  readonly maxSessions?: number;
}

export interface LeaseOptions {
  readonly signal?: AbortSignal;
  /** The proxy a session's requests go through (per_session rotation: its own), for its login. */
  readonly proxyFor?: (session: number, generation: number) => ProxyEndpoint | null;
  /** The job's politeness for the login's requests (login-gate.ts); without it they are sent at once. */
  readonly gate?: LoginGate;
}

/** A fetch's hold on its session. */
export interface SessionLease {
  readonly session: number;
  readonly generation: number;
  /** The job's request options with the session's cookies; every Set-Cookie goes into its jar. */
  readonly profile: RequestProfile;
  /** Saves what the fetch's responses set (nothing when nothing changed). */
  settle(causationId: string | null): Promise<void>;
  /** The session met a block: retired, a fresh one takes its slot. `code` says why. */
  retire(code: string, causationId: string | null): Promise<void>;
}

/** Sessions of a spec's pool: `sessions`, or 1 for a login without a size; 0: none. */
export function poolSizeOf(spec: Pick<CrawlSpec, 'sessions' | 'login'>): number {
  const size = spec.sessions ?? 0;
  return size > 0 ? size : spec.login ? 1 : 0;
}

/** The session a URL's fetches use: FNV-1a of the URL, modulo the pool. */
export function sessionOf(url: string, size: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < url.length; i++) {
    h ^= url.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % size;
}

interface Live {
  state: SessionState;
  jar: SessionJar;
  /** The login under way, shared by the fetches that wait for it. */
  loggingIn?: Promise<void>;
  /** Saves in order, so versions grow in the store as they do here. */
  saving: Promise<void>;
}

export class SessionPool {
  private readonly live = new Map<string, Live>();
  private readonly max: number;

  constructor(private readonly deps: SessionPoolDeps) {
    this.max = deps.maxSessions ?? 10_000;
  }

  /** The fetch's session, logged in when the spec has a login; null when the spec has no pool. */
  async lease(request: Pick<FetchWithSpec, 'job_id' | 'url' | 'event_id'>, spec: CrawlSpec, base: RequestProfile | null, options: LeaseOptions = {}): Promise<SessionLease | null> {
    const size = poolSizeOf(spec);
    if (size === 0) return null;
    const session = sessionOf(request.url, size);
    const live = await this.current(request.job_id, session, spec, options);
    if (spec.login) await this.loggedIn(live, spec, base, request.event_id ?? null, options);
    const generation = live.state.generation;
    const profile = live.jar.profile(base);
    return {
      session,
      generation,
      profile,
      settle: (causationId) => (live.jar.changed ? this.save(live, { reason: 'cookies' }, causationId) : Promise.resolve()),
      retire: async (code, causationId) => {
        // Several fetches of the session may meet the block: it is retired once.
        if (live.state.generation !== generation) return;
        live.jar = SessionJar.fromSpec(spec);
        live.loggingIn = undefined;
        await this.save(live, { generation: generation + 1, login: 'none', reason: `retired: ${code}` }, causationId);
        this.deps.onEvent?.({ kind: 'retired', jobId: live.state.jobId, session, generation: generation + 1, reason: code });
      },
    };
  }

  /** The session as this worker knows it, brought up to date with the store (another worker's changes, a dead one's last save). */
  private async current(jobId: string, session: number, spec: CrawlSpec, options: { signal?: AbortSignal }): Promise<Live> {
    const key = `${jobId}:${session}`;
    let live = this.live.get(key);
    const stored = await this.deps.store.load(jobId, session, options);
    // Another fetch may have made it while the store answered.
    live = this.live.get(key) ?? live;
    if (!live) {
      live = stored
        ? { state: stored, jar: stored.jar ? SessionJar.deserialize(stored.jar) : SessionJar.fromSpec(spec), saving: Promise.resolve() }
        : { state: { jobId, session, generation: 0, version: 0, jar: '', login: 'none', logins: 0, reason: '' }, jar: SessionJar.fromSpec(spec), saving: Promise.resolve() };
      if (stored) this.deps.onEvent?.({ kind: 'resumed', jobId, session, generation: stored.generation, reason: `version ${stored.version}, login ${stored.login}` });
      this.live.set(key, live);
      if (this.live.size > this.max) this.live.delete(this.live.keys().next().value!);
    } else {
      if (stored && stored.version > live.state.version) {
        // Changed by another worker since: its state wins (a login it did, cookies it got).
        live.state = stored;
        live.jar = stored.jar ? SessionJar.deserialize(stored.jar) : SessionJar.fromSpec(spec);
        live.loggingIn = undefined;
      }
      this.live.delete(key);
      this.live.set(key, live);
    }
    return live;
  }

  private async loggedIn(live: Live, spec: CrawlSpec, base: RequestProfile | null, causationId: string | null, options: LeaseOptions): Promise<void> {
    for (;;) {
      if (live.state.login === 'done') return;
      if (live.state.login === 'failed') throw new LoginFailedError(live.state.reason);
      if (!live.loggingIn) {
        const attempt = this.logInOnce(live, spec, base, causationId, options);
        live.loggingIn = attempt;
        attempt.catch(() => undefined).finally(() => {
          if (live.loggingIn === attempt) live.loggingIn = undefined;
        });
      }
      await live.loggingIn;
    }
  }

  private async logInOnce(live: Live, spec: CrawlSpec, base: RequestProfile | null, causationId: string | null, options: LeaseOptions): Promise<void> {
    const login = spec.login!;
    const { jobId, session, generation } = live.state;
    const jar = live.jar;
    try {
      const proxy = options.proxyFor?.(session, generation) ?? null;
      await logIn(login, jar.profile(base), this.deps, { ...(options.signal ? { signal: options.signal } : {}), ...(proxy ? { proxy } : {}), ...(options.gate ? { gate: options.gate } : {}), onCookies: (cookies: readonly BrowserCookie[]) => jar.receiveBrowserCookies(cookies) });
    } catch (err) {
      if (!(err instanceof LoginFailedError)) throw err;
      if (live.state.generation === generation) await this.save(live, { login: 'failed', reason: err.message }, causationId);
      this.deps.onEvent?.({ kind: 'login_failed', jobId, session, generation, reason: err.message });
      throw err;
    }
    // Retired while it logged in: the new generation logs in on its own.
    if (live.state.generation !== generation || live.jar !== jar) return;
    await this.save(live, { login: 'done', logins: live.state.logins + 1, reason: 'login' }, causationId);
    this.deps.onEvent?.({ kind: 'login', jobId, session, generation, reason: 'login' });
  }

  /** A new version of the session, saved after every earlier one. */
  private save(live: Live, change: Partial<Pick<SessionState, 'generation' | 'login' | 'logins' | 'reason'>>, causationId: string | null): Promise<void> {
    live.state = { ...live.state, ...change, version: live.state.version + 1, jar: live.jar.serialize() };
    live.jar.settled();
    const state = live.state;
    const next = live.saving.catch(() => undefined).then(() => this.deps.store.save(state, causationId));
    live.saving = next;
    return next;
  }
}
