/**
 * `trawl logs <job id> [--json]`: the job's log from the start, live until it ends (SSE). Exit 1
 * when the job failed. `--json`: one JSON object a line (NDJSON), the end as `{"end": …}`.
 */
import type { ApiClient } from '../lib/api-client.ts';
import { printable, styleFor } from '../lib/format.ts';
import { followLogs } from '../lib/log-stream.ts';

export async function logs(api: ApiClient, jobId: string, options: { json?: boolean } = {}): Promise<number> {
  const s = styleFor(process.stdout);
  const level = (l: string) => (l === 'error' ? s.red('ERROR') : l === 'warn' ? s.yellow('WARN ') : s.dim('INFO '));
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  const end = await followLogs(api, jobId, (line) => {
    if (options.json) return void process.stdout.write(JSON.stringify(line) + '\n');
    process.stdout.write(`${s.dim(printable(line.ts.slice(11, 23)))} ${level(line.level)} ${printable(line.msg)}\n`);
  }, { signal: controller.signal });
  if (options.json) process.stdout.write(JSON.stringify({ end }) + '\n');
  else process.stdout.write(
    `${s.bold(`— ${printable(end.status)}`)}: ${end.pages_fetched} pages fetched, ${end.pages_failed} failed, ${end.items_extracted} items${end.error ? ` (${printable(end.error)})` : ''}\n`,
  );
  return end.status === 'failed' ? 1 : 0;
}
