/**
 * The login wall: a site that wants a session sends a visitor without one to its login form, most
 * often with a redirect that ends at `200` on a form — a page that, stored, would stand in for the
 * one asked for and give no items, so a crawl of a members' area without a login would end
 * "finished" with one empty page. It is one of the block rules (block-classifier.ts, `login_wall`).
 *
 * An answer is a login wall when it is
 *  - a `401` (the site asks for credentials), or
 *  - a 2xx HTML page reached by a redirect to another path, holding a password field, at a URL that
 *    names a login (`/login`, `/signin`, `/users/sign_in`, `/auth/…`, `/sso`, `/session`, …) —
 *    a redirect alone is not enough (a page moved to its slug on a site with a login box in every
 *    header must stay a page), nor is a password field (that box again);
 * unless the URL asked for names a login or a logout itself: a crawl that starts at a site's own
 * login page, or follows its "log out" link, gets that page, not a wall.
 *
 * Pure: the classifier gives it the status, the start of the body it scans, and both URLs.
 */

export interface LoginWallInput {
  readonly status: number;
  readonly isHtml: boolean;
  /** The start of the body the block rules scan ('' when none). */
  readonly text: string;
  /** The URL asked for, and where its redirects ended; null when unknown (the status rule alone applies). */
  readonly url: string | null;
  readonly finalUrl: string | null;
}

/** An `<input>` whose type is password, whatever the order of its attributes and quotes. */
const PASSWORD_FIELD = /<input\b[^>]*\btype\s*=\s*["']?password["'\s/>]/i;

/** A login (or logout) named in a URL's path or query: its words as sites spell them. */
const LOGIN_WORDS = /(?:^|[^a-z])(?:log[-_]?in|sign[-_]?in|log[-_]?on|auth|oauth2?|sso|cas|session|sessions)(?:$|[^a-z])/i;
const LOGOUT_WORDS = /(?:^|[^a-z])(?:log[-_]?out|sign[-_]?out|log[-_]?off)(?:$|[^a-z])/i;

function parts(url: string): { path: string; search: string } | null {
  try {
    const u = new URL(url);
    return { path: decodeURIComponentSafe(u.pathname), search: decodeURIComponentSafe(u.search) };
  } catch {
    return null;
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `/a/b/` and `/a/b` are one page: a slash added by a redirect moves nothing. */
const samePath = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/** Whether a URL names a login or a logout (its path or query). */
export function namesLogin(url: string): boolean {
  const p = parts(url);
  if (!p) return false;
  const all = `${p.path}${p.search}`;
  return LOGIN_WORDS.test(all) || LOGOUT_WORDS.test(all);
}

/** Why the answer is a login wall, in words for the job's log (never the body), or null. */
export function loginWallOf(input: LoginWallInput): string | null {
  if (input.url !== null && namesLogin(input.url)) return null;
  const asked = input.url ?? 'the page';
  if (input.status === 401) return `${asked} answered HTTP 401`;
  if (input.status < 200 || input.status >= 300 || !input.isHtml || input.url === null || input.finalUrl === null) return null;
  const from = parts(input.url);
  const to = parts(input.finalUrl);
  if (!from || !to || samePath(from.path, to.path)) return null;
  if (!LOGIN_WORDS.test(to.path) || !PASSWORD_FIELD.test(input.text)) return null;
  return `${input.url} redirected to a login form (${input.finalUrl})`;
}
