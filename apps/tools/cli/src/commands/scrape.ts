/**
 * `trawl scrape <url>` and `trawl map <url>`: `POST /scrape` and `POST /map`, the answer printed.
 * A scrape prints its first text format (Markdown by default) alone on stdout, so it pipes; `--json`
 * prints the whole answer. A 202 (the page not there within the timeout) prints the job and how
 * to read its result later, and fails (exit 1): stdout holds no page.
 */
import type { ApiClient } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { printable } from '../lib/format.ts';
import type { OptionsBody } from './crawl-options.ts';

export interface ScrapeOptions {
  readonly formats: readonly string[];
  readonly timeoutMs?: number;
  readonly json: boolean;
  readonly options: Partial<OptionsBody>;
}

function pending(jobId: string): never {
  throw new CliError(`the page had no outcome within the timeout; job ${printable(jobId)} goes on: GET /scrape/${printable(jobId)} for its result`);
}

export async function scrape(api: ApiClient, url: string, o: ScrapeOptions): Promise<number> {
  const answer = (await api.ok(
    api.http.POST('/scrape', { body: { url, formats: [...o.formats], ...(o.timeoutMs === undefined ? {} : { timeout_ms: o.timeoutMs }), ...o.options } as never }),
  )) as Record<string, unknown>;
  if (o.json) {
    process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
    return answer.ok === false ? 1 : 0;
  }
  if (!('ok' in answer)) pending(answer.job_id as string);
  if (answer.ok === false) {
    const error = answer.error as { code: string; message: string };
    throw new CliError(`${printable(url)}: ${printable(error.message)} (${printable(error.code)})`);
  }
  const formats = answer.formats as Record<string, unknown>;
  const first = o.formats.find((f) => f !== 'metadata') ?? 'markdown';
  const value = formats[first];
  process.stdout.write(Array.isArray(value) ? value.join('\n') + '\n' : `${String(value ?? '')}\n`);
  return 0;
}

export interface MapOptions {
  readonly search?: string;
  readonly limit?: number;
  readonly sitemap?: 'include' | 'only' | 'skip';
  readonly json: boolean;
}

export async function map(api: ApiClient, url: string, o: MapOptions): Promise<number> {
  const body = { url, ...(o.search ? { search: o.search } : {}), ...(o.limit ? { limit: o.limit } : {}), ...(o.sitemap ? { sitemap: o.sitemap } : {}) };
  const answer = (await api.ok(api.http.POST('/map', { body: body as never }))) as Record<string, unknown>;
  if (o.json) {
    process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
    return answer.ok === false ? 1 : 0;
  }
  if (!('links' in answer)) pending(answer.job_id as string);
  if (answer.ok === false) {
    const error = answer.error as { code: string; message: string };
    throw new CliError(`${printable(url)}: ${printable(error.message)} (${printable(error.code)})`);
  }
  for (const link of answer.links as string[]) process.stdout.write(`${printable(link)}\n`);
  return 0;
}
