/**
 * The typed client of the Trawl API. `paths` and `components` are generated from the API's
 * OpenAPI document (`src/generated/openapi.ts`, from `openapi.json`: `npm run generate`), never
 * written by hand and never taken from the API's code; the client is openapi-fetch over them, so a
 * path, a parameter or a body the API does not have is a type error, and every answer is typed by
 * its status. The API key goes out as `Authorization: Bearer` on every request.
 *
 * Nothing here needs Node: the CLI runs it in Node, the console in the browser.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.ts';

export type { components, operations, paths } from './generated/openapi.ts';

type Schemas = components['schemas'];

/** A job (`GET /jobs/{id}/status`, the items of `GET /jobs`). */
export type Job = Schemas['Job'];
export type JobStatus = Job['status'];
export type Page = Schemas['Page'];
export type Item = Schemas['Item'];
/** `POST /crawl` (and `POST /jobs/{id}/retry-failed`) when the crawl starts now, or was found in the dedupe TTL. */
export type CrawlAccepted = Schemas['CrawlAccepted'];
/** `POST /crawl` with `schedule_at` or `interval`. */
export type CrawlScheduled = Schemas['CrawlScheduled'];
export type Schedule = Schemas['Schedule'];
export type Website = Schemas['Website'];
export type Target = Schemas['Target'];
export type Webhook = Schemas['Webhook'];
export type Delivery = Schemas['Delivery'];
/** The console's routes. */
export type DeadLetter = Schemas['DeadLetter'];
export type ScrapeMetrics = Schemas['ScrapeMetrics'];
export type LagReport = Schemas['LagReport'];
/** `GET /jobs/{id}/changes`: a schedule's run against its previous finished run. */
export type JobChanges = Schemas['JobChanges'];
export type PageChange = Schemas['PageChange'];
export type ItemChange = Schemas['ItemChange'];
/** Every error the API answers: `{error: {code, message, field?, limit?}}`. */
export type ErrorResponse = Schemas['ErrorResponse'];
export type ErrorCode = ErrorResponse['error']['code'];

/** The JSON body of a path's 2xx answer, for the shapes that have no name of their own (`Body<'/quotas', 'get'>`). */
export type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof R]
  : never;

export type TrawlClient = Client<paths>;

export interface TrawlClientOptions {
  /** Where the API answers, e.g. `http://127.0.0.1:3000`; in a page it serves, its origin. */
  readonly baseUrl: string;
  /**
   * The API key (`trawl keys create <user>`). A function is asked at every request, for a key
   * that changes (a browser's sign-in); a request that sets its own `authorization` keeps it.
   */
  readonly apiKey?: string | (() => string | null | undefined);
  /** A fetch of your own (tests, proxies); default: the global one. */
  readonly fetch?: (request: Request) => Promise<Response>;
}

export function createTrawlClient(options: TrawlClientOptions): TrawlClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), ...(options.fetch ? { fetch: options.fetch } : {}) });
  client.use({
    onRequest({ request }) {
      const key = typeof options.apiKey === 'function' ? options.apiKey() : options.apiKey;
      if (key && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${key}`);
      return request;
    },
  });
  return client;
}

/**
 * An answer that is not 2xx, with the API's `code`, `message` and `field` when its body is the
 * API's error shape, else `HTTP_<status>` and the body's text.
 */
export class TrawlApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** The body as the API sent it (parsed when JSON). */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'TrawlApiError';
  }

  static of(response: Response, body: unknown): TrawlApiError {
    const error = typeof body === 'object' && body !== null ? (body as { error?: { code?: unknown; message?: unknown; field?: unknown } }).error : undefined;
    const text = typeof body === 'string' && body ? body : response.statusText;
    return new TrawlApiError(
      response.status,
      typeof error?.code === 'string' ? error.code : `HTTP_${response.status}`,
      typeof error?.message === 'string' ? error.message : text,
      typeof error?.field === 'string' ? error.field : undefined,
      body,
    );
  }
}

/** What a call of the client resolves to (openapi-fetch's `{data, error, response}`). */
export interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/** The data of a 2xx answer; a TrawlApiError for any other. */
export async function expectOk<T>(call: Promise<Answer<T>> | Answer<T>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw TrawlApiError.of(response, error);
  return data as T;
}
