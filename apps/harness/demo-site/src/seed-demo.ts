/**
 * Loads the bundled demo site's website and scrape target (and an hourly schedule for it), so a
 * fresh stack has something real to crawl. Idempotent: ids are fixed, rows are upserted.
 */
import { JOB_BOARD_SPEC } from './job-board.ts';
import { createSchedule, crawlSpec, upsertTarget, upsertWebsite, type Pool, type Website } from '@trawl/store';

export const DEMO_WEBSITE_ID = 'demo-jobs';
export const DEMO_TARGET_ID = 'demo-jobs-engineering';

export function demoBaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return (env.TRAWL_DEMO_URL ?? `http://127.0.0.1:${env.TRAWL_DEMO_PORT ?? 8090}`).replace(/\/+$/, '');
}

export async function seedDemo(pool: Pool, baseUrl: string = demoBaseUrl()): Promise<Website> {
  const website = await upsertWebsite(pool, {
    ...crawlSpec(null),
    ...JOB_BOARD_SPEC,
    id: DEMO_WEBSITE_ID,
    owner_id: null,
    name: 'Demo job board',
    base_url: baseUrl,
    requires_browser: false,
    max_depth: 2,
    max_pages: 500,
    host_concurrency: 8,
    host_delay_ms: 0,
  });
  await upsertTarget(pool, {
    id: DEMO_TARGET_ID,
    owner_id: null,
    website_id: DEMO_WEBSITE_ID,
    name: 'Engineering jobs',
    url_template: `${baseUrl}/jobs?q={keywords}`,
    keywords: ['engineer'],
    location: null,
    active: true,
  });
  await createSchedule(pool, { id: `${DEMO_TARGET_ID}-hourly`, owner_id: null, target_id: DEMO_TARGET_ID, cadence: { cron: '0 * * * *' } });
  return website;
}
