/**
 * The CLI's way to the API: `@trawl/client`, typed from the API's OpenAPI document, so a command
 * asks for what the API has and reads what it answers by the document's types. Base URL from
 * `TRAWL_API_URL` (else `TRAWL_API_HOST`:`TRAWL_API_PORT`), key from `TRAWL_API_KEY` or
 * `.trawl/api-key`. API errors become CliErrors carrying the API's own code and message.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createTrawlClient, TrawlApiError, type Answer, type TrawlClient } from '@trawl/client';
import { apiKeyFile } from './paths.ts';
import { CliError } from './cli-error.ts';

export function apiBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TRAWL_API_URL) return env.TRAWL_API_URL.replace(/\/+$/, '');
  return `http://${env.TRAWL_API_HOST || '127.0.0.1'}:${env.TRAWL_API_PORT || '3000'}`;
}

export function readApiKey(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.TRAWL_API_KEY) return env.TRAWL_API_KEY.trim();
  const file = apiKeyFile(env);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

/** The API refused a request; `code` is the API's, and a 429 or 5xx may succeed if tried again. */
export class ApiRequestError extends CliError {
  override readonly retriable: boolean;
  constructor(
    readonly status: number,
    override readonly code: string,
    message: string,
  ) {
    super(`${message} (${code}, HTTP ${status})`);
    this.retriable = status === 429 || status >= 500;
  }

  static of(err: TrawlApiError): ApiRequestError {
    return new ApiRequestError(err.status, err.code, err.message);
  }
}

export class ApiClient {
  /** The typed client: `api.http.GET('/jobs/{id}/status', { params: { path: { id } } })`. */
  readonly http: TrawlClient;

  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {
    this.http = createTrawlClient({ baseUrl, apiKey: key });
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env): ApiClient {
    const key = readApiKey(env);
    if (!key) throw new CliError('no API key: set TRAWL_API_KEY, or run `npx trawl demo` (it saves one), or `npx trawl keys create <user> > .trawl/api-key`');
    return new ApiClient(apiBaseUrl(env), key);
  }

  /** For the WebSocket feed, which the typed client does not speak. */
  get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.key}` };
  }

  /** The data of a call's 2xx answer; an ApiRequestError for any other, a CliError when the API does not answer. */
  async ok<T>(call: Promise<Answer<T>>): Promise<T> {
    let answer: Answer<T>;
    try {
      answer = await call;
    } catch (err) {
      throw this.unreachable(err);
    }
    if (!answer.response.ok) throw ApiRequestError.of(TrawlApiError.of(answer.response, answer.error));
    return answer.data as T;
  }

  /** The lines of a streamed answer (NDJSON; the call asks with `parseAs: 'stream'`), as they arrive. */
  async *lines(call: Promise<Answer<ReadableStream<Uint8Array> | null>>): AsyncGenerator<string> {
    const body = await this.ok(call);
    if (!body) return;
    const decoder = new TextDecoder();
    let rest = '';
    const reader = body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      rest += decoder.decode(r.value, { stream: true });
      const parts = rest.split('\n');
      rest = parts.pop()!;
      for (const line of parts) if (line) yield line;
    }
    rest += decoder.decode();
    if (rest) yield rest;
  }

  /** A failed fetch as the CLI says it; an abort (Ctrl-C) stays what it is. */
  unreachable(err: unknown): unknown {
    if (err instanceof CliError || (err as Error | undefined)?.name === 'AbortError') return err;
    return new CliError(`cannot reach the API at ${this.baseUrl} (${(err as Error).cause ?? (err as Error).message}); is it running? try \`npx trawl up\``);
  }
}
