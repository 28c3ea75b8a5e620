/**
 * `trawl export <job id> --format ndjson|csv [--include html|text|markdown]`: every page of a job,
 * streamed from `GET /jobs/:id/pages?format=ndjson` to stdout as it arrives, so a job of any size
 * exports in constant memory. With `--include`, each page carries its stored content in that format
 * (the job must have asked for it with `formats`).
 */
import type { ApiClient } from '../lib/api-client.ts';
import { UsageError } from '../lib/cli-error.ts';
import { csvLine } from '@trawl/store';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export const CONTENT_FORMATS = ['html', 'text', 'markdown'] as const;

/** The CSV's columns, in order: the page's fields people sort and filter on. */
const CSV_COLUMNS = ['fetch_id', 'url', 'final_url', 'status', 'ok', 'content_type', 'bytes', 'fetch_ms', 'depth', 'links_count', 'item_count', 'error_code', 'fetched_at', 'content_hash'] as const;

export interface ExportOptions {
  readonly format: string;
  readonly include?: string;
}

export async function exportJob(api: ApiClient, jobId: string, options: ExportOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  if (!(EXPORT_FORMATS as readonly string[]).includes(options.format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
  if (options.include !== undefined && !(CONTENT_FORMATS as readonly string[]).includes(options.include)) throw new UsageError(`--include must be one of ${CONTENT_FORMATS.join(', ')}`);
  const include = options.include as (typeof CONTENT_FORMATS)[number] | undefined;
  const query = { format: 'ndjson' as const, ...(include ? { include } : {}) };
  const columns: string[] = [...CSV_COLUMNS, ...(options.include ? [options.include] : [])];
  const write = (s: string): Promise<void> => new Promise((resolve) => (out.write(s) ? resolve() : out.once('drain', resolve)));
  if (options.format === 'csv') await write(csvLine(columns));
  let pages = 0;
  for await (const line of api.lines(api.http.GET('/jobs/{id}/pages', { params: { path: { id: jobId }, query }, parseAs: 'stream' }))) {
    pages++;
    if (options.format === 'ndjson') await write(`${line}\n`);
    else {
      const page = JSON.parse(line) as Record<string, unknown>;
      await write(csvLine(columns.map((c) => page[c])));
    }
  }
  process.stderr.write(`${pages} pages exported\n`);
  return 0;
}
