/**
 * A small client of the Trawl API: base URL from `TRAWL_API_URL` (else `TRAWL_API_HOST`:
 * `TRAWL_API_PORT`), key from `TRAWL_API_KEY` or `.trawl/api-key`. API errors become CliErrors
 * carrying the API's own code and message.
 */
import { existsSync, readFileSync } from 'node:fs';
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

export class ApiRequestError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${message} (${code}, HTTP ${status})`);
  }
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): ApiClient {
    const key = readApiKey(env);
    if (!key) throw new CliError('no API key: set TRAWL_API_KEY, or run `npx trawl demo` (it saves one), or `npx trawl keys create <user> > .trawl/api-key`');
    return new ApiClient(apiBaseUrl(env), key);
  }

  get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.key}` };
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: { ...this.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new CliError(`cannot reach the API at ${this.baseUrl} (${(err as Error).cause ?? (err as Error).message}); is it running? try \`npx trawl up\``);
    }
    const text = await res.text();
    const json: unknown = text ? JSON.parse(text) : undefined;
    if (!res.ok) {
      const error = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new ApiRequestError(res.status, error?.code ?? 'HTTP_ERROR', error?.message ?? (text || res.statusText));
    }
    return json as T;
  }
}
