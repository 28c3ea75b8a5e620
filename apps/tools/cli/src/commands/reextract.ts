/**
 * `trawl reextract <job> --spec FILE [--json]`: `POST /jobs/:id/reextract` with the extraction rules
 * in FILE (JSON: `{item_root?, item_root_xpath?, item_fields?, item_schema?, formats?, only_main_content?}`, or `{"spec": {…}}`), the
 * new job's id printed alone on stdout (so it pipes into `trawl logs`), what it will do on stderr.
 * The job fetches nothing; `GET /jobs/<new>/changes` lists what the new rules changed.
 */
import { readFileSync } from 'node:fs';
import type { ApiClient } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { printable } from '../lib/format.ts';

/** The rules in a spec file: the object itself, or its `spec`. */
export function rulesOf(text: string, file: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliError(`${file} must hold a JSON object of extraction rules`);
  const spec = (parsed as Record<string, unknown>).spec;
  return spec && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>) : (parsed as Record<string, unknown>);
}

export async function reextract(api: ApiClient, jobId: string, specFile: string, options: { json: boolean }): Promise<number> {
  let text: string;
  try {
    text = readFileSync(specFile, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${specFile}: ${(err as Error).message}`);
  }
  const answer = await api.ok(api.http.POST('/jobs/{id}/reextract', { params: { path: { id: jobId } }, body: { spec: rulesOf(text, specFile) } as never }));
  if (options.json) {
    process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
    return 0;
  }
  const { pages } = answer;
  const how = answer.cached ? 'already re-extracted as' : 're-extracting as';
  process.stderr.write(`${printable(jobId)}: ${how} ${printable(answer.job_id)} (${pages.stored} of ${pages.fetched} pages stored${pages.not_stored ? `, ${pages.not_stored} will fail NOT_STORED` : ''}); changes: ${printable(answer.changes_url)}\n`);
  process.stdout.write(`${answer.job_id}\n`);
  return 0;
}
