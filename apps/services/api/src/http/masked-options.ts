/**
 * Request options as answers show them: header values and cookie values are credentials (an
 * `Authorization`, a session id), write-only like webhook secrets, so a view names them and never
 * shows their values (invariant 10). A website shared by the platform is seen by every user: the same
 * view keeps the operator's values from all of them. To change a value, send it again.
 */
export const MASK = '***';

interface WithOptions {
  readonly headers?: Readonly<Record<string, string>> | null;
  readonly cookies?: Readonly<Record<string, readonly string[]>> | null;
}

/** `o` with every header value and cookie value replaced by `***` (header names, cookie domains and names kept). */
export function maskedOptions<T extends WithOptions>(o: T): T {
  const out: Record<string, unknown> = { ...(o as Record<string, unknown>) };
  if (o.headers) out.headers = Object.fromEntries(Object.keys(o.headers).map((name) => [name, MASK]));
  if (o.cookies) out.cookies = Object.fromEntries(Object.entries(o.cookies).map(([domain, list]) => [domain, list.map(maskCookie)]));
  return out as T;
}

/** `name=value; attributes` → `name=***` (attributes may name paths and domains, kept out too). */
function maskCookie(cookie: string): string {
  const eq = cookie.indexOf('=');
  const name = (eq < 0 ? '' : cookie.slice(0, eq)).trim();
  return `${name}=${MASK}`;
}
