/**
 * The two ways a session logs in (CrawlSpec.login), each through the session's own jar so that
 * what the site sets on the way — the pre-login cookie its CSRF token is tied to, the session
 * cookie — stays with the session:
 *
 * - `form`: GET the login page, find its form (login-form.ts), fill the credentials (sealed in
 *   the spec, opened here and nowhere else) over its own fields, submit it, follow the redirects,
 *   judge the page it ends on (login-check.ts).
 * - `browser`: the spec's actions run on the login page in Chromium (BrowserLogin: the browser
 *   fetcher's action runner), and the page's cookies go into the jar; then the same check.
 *
 * A network error or a 5xx is thrown as it is (retriable: the page that needed the login is
 * retried); anything the same credentials would meet again is a LoginFailedError. Each request goes
 * through the gate it is given (LoginGate: robots.txt and the host's politeness, login-gate.ts).
 */
import type { LoginSpec } from '@trawl/schemas';
import { HttpStatusError, LoginFailedError } from '../errors.ts';
import type { FetchResult } from '../fetch/fetch-result.ts';
import { statusError } from '../fetch/status-error.ts';
import type { BrowserCookie, RequestProfile } from '../request/request-profile.ts';
import type { ProxyEndpoint } from '../proxy/proxy-pool.ts';
import { loginProblem } from './login-check.ts';
import { findLoginForm, formBody } from './login-form.ts';

/** What a login needs of the HTTP fetcher (HttpFetcher). */
export interface LoginHttp {
  fetch(url: string, options: { signal?: AbortSignal; request?: RequestProfile | null; form?: string; proxy?: ProxyEndpoint | null }): Promise<FetchResult>;
}

/**
 * A browser login: runs the actions on the login page with the session's cookies, answers the page
 * it ended on and the cookies the browser holds then. The browser fetcher's action runner
 * (fetch/browser-fetcher.ts) provides it; a worker without one fails browser logins, saying so.
 */
export type BrowserLogin = (login: LoginSpec, profile: RequestProfile, options: { signal?: AbortSignal; open: OpenSealed; proxy?: ProxyEndpoint | null }) => Promise<{ readonly finalUrl: string; readonly status: number; readonly body: string | null; readonly cookies: readonly BrowserCookie[] }>;

/**
 * Sends one request of a login through the job's politeness (login-gate.ts: robots.txt, the host's
 * slot and spacing). `first`: nothing of the login was sent before it, so it may be deferred.
 */
export type LoginGate = <T extends { readonly status: number; readonly retryAfterMs?: number | null }>(url: string, step: { readonly first: boolean; readonly proxy: ProxyEndpoint | null }, send: () => Promise<T>) => Promise<T>;

/** No politeness: each request is sent at once (a login used alone, in tests). */
const ungated: LoginGate = (_url, _step, send) => send();

/** Opens a sealed spec value (`tsec1.…`, a credential); throws when it cannot. */
export type OpenSealed = (sealed: string) => string;

export interface LoginDeps {
  readonly http: LoginHttp;
  readonly browser?: BrowserLogin;
  /** Opens a field's sealed value (the worker's CredentialOpener, TRAWL_SECRETS_KEY); default: as it is (tests). */
  readonly open?: OpenSealed;
}

/** Logs the session in; `profile` is the session's (its jar takes every cookie set on the way). */
export async function logIn(login: LoginSpec, profile: RequestProfile, deps: LoginDeps, options: { signal?: AbortSignal; onCookies?: (cookies: readonly BrowserCookie[]) => void; proxy?: ProxyEndpoint | null; gate?: LoginGate } = {}): Promise<void> {
  // The session's proxy, when it has one: a site that answers only through it logs in only through it.
  const via = { ...(options.signal ? { signal: options.signal } : {}), ...(options.proxy ? { proxy: options.proxy } : {}) };
  // Every request of the login goes through the job's politeness, as its pages do (login-gate.ts).
  const gate = options.gate ?? ungated;
  const proxy = options.proxy ?? null;
  if (login.kind === 'browser') {
    const browser = deps.browser;
    if (!browser) throw new LoginFailedError('browser logins are not available on this worker (no action runner)');
    // One render, one slot: what its actions load runs within it, as a browser page's requests do.
    const answer = await gate(login.url, { first: true, proxy }, () => browser(login, profile, { ...via, open: deps.open ?? ((value: string) => value) }));
    options.onCookies?.(answer.cookies);
    const problem = loginProblem(answer, login);
    if (problem) throw new LoginFailedError(`browser login at ${login.url}: ${problem}`);
    return;
  }
  const page = await gate(login.url, { first: true, proxy }, () => deps.http.fetch(login.url, { ...via, request: profile }));
  const failure = statusError(page);
  if (failure) {
    if (failure.retriable) throw failure;
    throw new LoginFailedError(`the login page ${login.url} answered HTTP ${page.status}`);
  }
  if (page.body === null) throw new LoginFailedError(`the login page ${login.url} is not HTML`);
  const form = findLoginForm(page.body, page.finalUrl, login.form_selector);
  const credentials: Record<string, string> = {};
  const open = deps.open ?? ((value: string) => value);
  for (const [name, sealed] of Object.entries(login.fields)) {
    try {
      credentials[name] = open(sealed);
    } catch {
      throw new LoginFailedError(`the login field "${name}" cannot be opened: sealed with a key this worker does not have (TRAWL_SECRETS_KEY, TRAWL_SECRETS_OLD_KEYS)`);
    }
  }
  // A GET form would put the credentials in the URL, which fetch errors, logs and the site's own
  // access log all carry: such a login is refused rather than sent.
  if (form.method !== 'post') throw new LoginFailedError(`the login form at ${login.url} submits with GET: the credentials would travel in its URL; Trawl posts logins only`);
  const body = formBody(form, credentials);
  const answer = await gate(form.action, { first: false, proxy }, () => deps.http.fetch(form.action, { ...via, request: profile, form: body }));
  if (answer.status >= 500 || answer.status === 429 || answer.status === 408) throw new HttpStatusError(`HTTP ${answer.status} from the login form`, answer.status, answer.retryAfterMs);
  const problem = loginProblem(answer, login);
  if (problem) throw new LoginFailedError(`form login at ${login.url}: ${problem}`);
}
