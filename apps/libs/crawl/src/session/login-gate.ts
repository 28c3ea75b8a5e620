/**
 * The politeness a login's requests go through (LoginGate, form-login.ts): the same robots.txt
 * verdict and the same host slot and spacing as the job's pages (page-processor.ts), so that a
 * login — a form's GET and POST, a browser login's render — is no way around a site's Crawl-delay,
 * a job's `host_delay_ms` / `host_concurrency`, a 429's pause or the operator's cap.
 *
 * - robots.txt: a login request to a URL robots.txt disallows for this crawler is not sent; the
 *   login fails (LoginFailedError: LOGIN_FAILED, saying so), since the same rule would refuse it on
 *   every attempt.
 * - The slot: the login's first request may be deferred like a page (HostBusyError: nothing was
 *   sent, the page that needed the login is parked until due). A later request (the form's POST)
 *   waits its turn instead (`patient`): deferring it would start the login over from its first
 *   request, which would meet the same spacing again, forever. A pause of the host (a 429's
 *   Retry-After) still defers it — rare, and the login starts over once it ends — so no worker
 *   slot is held for minutes.
 * - No deadlock with the page's own slot: a page leases its session, and so logs in, before it
 *   takes its slot (page-processor.ts fetchPolitely), and the fetches of the session that wait for
 *   the login hold no host slot either: with `host_concurrency: 1` the login's request takes the one
 *   slot, gives it back, and the pages follow.
 * - A 429/503 to a login request pauses the host as a page's does (only when the answer comes from
 *   the host itself, not through a tenant's proxy, which could forge it).
 */
import { LoginFailedError } from '../errors.ts';
import type { HostLimiter, HostPolicy } from '../politeness/host-limiter.ts';
import type { RobotsCache } from '../politeness/robots.ts';
import type { RequestProfile } from '../request/request-profile.ts';
import type { LoginGate } from './form-login.ts';

export interface LoginGateDeps {
  readonly robots: Pick<RobotsCache, 'check'>;
  readonly limiter: Pick<HostLimiter, 'acquire' | 'backoff' | 'succeeded'>;
  /** The job whose politeness the login shares. */
  readonly jobId: string;
  /** The job's policy on a host, as its pages take it (fixed, or the adaptive throttle's), given robots.txt's Crawl-delay there. */
  readonly policyOf: (host: string, crawlDelayMs: number | null) => Partial<HostPolicy>;
  /** The request options robots.txt is read with (the job's, without the session's cookies, as for its pages). */
  readonly profile: RequestProfile | null;
  readonly signal?: AbortSignal;
}

export function politeLoginGate(deps: LoginGateDeps): LoginGate {
  return async (url, step, send) => {
    const robots = await deps.robots.check(url, { request: deps.profile, ...(step.proxy ? { proxy: step.proxy } : {}) });
    if (!robots.allowed) throw new LoginFailedError(`robots.txt disallows the login's request to ${url}`);
    const host = new URL(url).host;
    const release = await deps.limiter.acquire(host, {
      jobId: deps.jobId,
      policy: deps.policyOf(host, robots.crawlDelayMs),
      crawlDelayMs: robots.crawlDelayMs,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(step.first ? {} : { patient: true }),
    });
    try {
      const answer = await send();
      const fromHost = !step.proxy || step.proxy.operator;
      if (fromHost && (answer.status === 429 || answer.status === 503)) deps.limiter.backoff(host, answer.retryAfterMs ?? null);
      else if (fromHost) deps.limiter.succeeded(host);
      return answer;
    } finally {
      release();
    }
  };
}
