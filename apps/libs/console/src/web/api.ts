/**
 * The console's only way to the API: `@trawl/client`, typed from the API's OpenAPI document, so
 * the views read answers by the document's types and cannot ask for what the API does not have.
 * The key lives in localStorage (the user asked to stay signed in on this browser; it never leaves
 * for anywhere but this origin), goes out as a Bearer header, and as `?access_token=` where
 * browsers cannot set headers (EventSource, WebSocket). A 401 to the stored key signs the user out.
 */
import { createTrawlClient, TrawlApiError, type Answer } from '@trawl/client';

export { TrawlApiError as ApiRequestError } from '@trawl/client';

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

/** Called on a 401: main.ts sends the user to the sign-in page. */
let onUnauthenticated: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onUnauthenticated = handler;
}

/** The typed client, at this page's origin (the API serves the console). */
export const client = createTrawlClient({ baseUrl: location.origin, apiKey: () => session.key() });
client.use({
  onResponse({ request, response }) {
    // A key being tried at sign-in is not the stored one: its 401 signs nobody out.
    if (response.status === 401 && request.headers.get('authorization') === `Bearer ${session.key()}`) onUnauthenticated();
  },
});

/** The data of a call's 2xx answer; an ApiRequestError for any other, and for no answer (`NETWORK`). */
export async function ok<T>(call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch (err) {
    throw new TrawlApiError(0, 'NETWORK', `the API did not answer (${(err as Error).message})`);
  }
  if (!answer.response.ok) throw TrawlApiError.of(answer.response, answer.error);
  return answer.data as T;
}

/** Query parameters without the empty ones (a form's blank field means "not given"). */
export function given<T extends Record<string, unknown>>(params: T): T {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== '')) as T;
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
  if (!res.ok) throw new TrawlApiError(res.status, `HTTP_${res.status}`, `export failed: ${res.statusText}`);
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
