/**
 * The console's only way to the API. The key lives in localStorage (the user asked to stay signed
 * in on this browser; it never leaves for anywhere but this origin), goes out as a Bearer header,
 * and as `?access_token=` where browsers cannot set headers (EventSource, WebSocket). A 401
 * signs the user out.
 */

const KEY_STORAGE = 'trawl.apiKey';

export const session = {
  key(): string | null {
    return localStorage.getItem(KEY_STORAGE);
  },
  set(key: string): void {
    localStorage.setItem(KEY_STORAGE, key);
  },
  clear(): void {
    localStorage.removeItem(KEY_STORAGE);
  },
};

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

/** Called on a 401: main.ts sends the user to the sign-in page. */
let onUnauthenticated: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onUnauthenticated = handler;
}

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, key: string | null = session.key()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (err) {
    throw new ApiRequestError(0, 'NETWORK', `the API did not answer (${(err as Error).message})`);
  }
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
    if (res.status === 401 && key === session.key()) onUnauthenticated();
    throw new ApiRequestError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? res.statusText, e?.field);
  }
  return json as T;
}

/** Query string from the defined values. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A URL for EventSource / WebSocket, which cannot send headers. */
export function tokenUrl(path: string, params: Record<string, string | undefined> = {}, protocol: 'http' | 'ws' = 'http'): string {
  const u = new URL(path, location.href);
  if (protocol === 'ws') u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const [k, v] of Object.entries(params)) if (v) u.searchParams.set(k, v);
  u.searchParams.set('access_token', session.key() ?? '');
  return u.toString();
}

/**
 * Downloads an export with the key in a header (a plain link could not carry it): the response
 * becomes a blob and a temporary link saves it under `filename`.
 */
export async function download(path: string, filename: string): Promise<number> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${session.key() ?? ''}` } });
  if (!res.ok) throw new ApiRequestError(res.status, `HTTP_${res.status}`, `export failed: ${res.statusText}`);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return blob.size;
}
