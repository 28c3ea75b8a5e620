/**
 * `trawl cancel|pause|resume|retry-failed <job> [--json]`: one POST on the job, its answer printed.
 * The API answers at once (202); the job's status follows as the frontier acts (`trawl jobs`).
 */
import type { ApiClient } from '../lib/api-client.ts';
import { printable } from '../lib/format.ts';

export const JOB_ACTIONS = ['cancel', 'pause', 'resume', 'retry-failed'] as const;
export type JobAction = (typeof JOB_ACTIONS)[number];

export function isJobAction(command: string): command is JobAction {
  return (JOB_ACTIONS as readonly string[]).includes(command);
}

function post(api: ApiClient, action: JobAction, jobId: string) {
  const init = { params: { path: { id: jobId } } };
  switch (action) {
    case 'cancel':
      return api.ok(api.http.POST('/jobs/{id}/cancel', init));
    case 'pause':
      return api.ok(api.http.POST('/jobs/{id}/pause', init));
    case 'resume':
      return api.ok(api.http.POST('/jobs/{id}/resume', init));
    case 'retry-failed':
      return api.ok(api.http.POST('/jobs/{id}/retry-failed', init));
  }
}

export async function jobAction(api: ApiClient, action: JobAction, jobId: string, options: { json: boolean }): Promise<void> {
  const answer = await post(api, action, jobId);
  if (options.json) return void process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
  if ('cached' in answer) {
    const how = answer.cached ? 'already retried as' : 'retrying its failed pages as';
    return void process.stdout.write(`${printable(jobId)}: ${how} ${printable(answer.job_id)}\n`);
  }
  process.stdout.write(`${printable(answer.job_id)}: ${printable(answer.status)}\n`);
}
