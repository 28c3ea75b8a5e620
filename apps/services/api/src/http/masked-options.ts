/**
 * Request options as answers show them: header values and cookie values are credentials (an
 * `Authorization`, a session id), write-only like webhook secrets, so a view names them and never
 * shows their values (invariant 10). A website shared by the platform is seen by every user: the same
 * view keeps the operator's values from all of them. To change a value, send it again.
 */
import { isSealed, redactCredentials } from '@trawl/store/secrets';

export const MASK = '***';

interface WithOptions {
  readonly headers?: Readonly<Record<string, string>> | null;
  readonly cookies?: Readonly<Record<string, readonly string[]>> | null;
}

/**
 * `o` with every header value and cookie value replaced by `***` (header names, cookie domains and
 * names kept), and the other credentials (proxies', a login's, actions' text) shown as `[sealed]` or
 * as the `{secret}` they name.
 */
export function maskedOptions<T extends WithOptions>(o: T): T {
  const { headers: _h, cookies: _c, ...others } = o as Record<string, unknown>;
  const out: Record<string, unknown> = { ...redactCredentials(others), headers: o.headers, cookies: o.cookies };
  if (o.headers === undefined) delete out.headers;
  if (o.cookies === undefined) delete out.cookies;
  if (o.headers) out.headers = Object.fromEntries(Object.entries(o.headers).map(([name, v]) => [name, typeof v === 'string' ? MASK : { secret: (v as { secret: string }).secret }]));
  if (o.cookies) out.cookies = Object.fromEntries(Object.entries(o.cookies).map(([domain, list]) => [domain, list.map(maskCookie)]));
  return out as T;
}

/**
 * `name=value; attributes` → `name=***` (attributes may name paths and domains, kept out too); a
 * cookie kept sealed (its name too) is `***`, one named by secret the `{secret}` it names.
 */
function maskCookie(cookie: string | { readonly secret: string }): string | { readonly secret: string } {
  if (typeof cookie !== 'string') return { secret: cookie.secret };
  if (isSealed(cookie)) return MASK;
  const eq = cookie.indexOf('=');
  const name = (eq < 0 ? '' : cookie.slice(0, eq)).trim();
  return `${name}=${MASK}`;
}
