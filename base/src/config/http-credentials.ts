/**
 * HTTP endpoints (the registry, ClickHouse) may carry `user:password@`; Node's fetch refuses such
 * URLs outright, and a URL with credentials should not travel into logs with the request. This
 * splits one into the bare URL and the Basic `authorization` header it stands for.
 */
export interface HttpTarget {
  /** The URL without user information. */
  readonly url: string;
  /** `Basic …` when the URL carried a user or a password. */
  readonly authorization: string | undefined;
}

export function httpTarget(url: string): HttpTarget {
  const u = new URL(url);
  if (!u.username && !u.password) return { url, authorization: undefined };
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  return { url: u.toString(), authorization };
}

/** The headers for a request to `url`'s server: its Basic authorization, if it has one. */
export function authHeaders(url: string): Record<string, string> {
  const { authorization } = httpTarget(url);
  return authorization ? { authorization } : {};
}
