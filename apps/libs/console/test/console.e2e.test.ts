/**
 * The console end to end, in headless Chromium against a whole Trawl (every service a child
 * process on its own topics, databases and ClickHouse database): sign in with a key, start a crawl
 * from the form and watch its progress reach 100% from the live feed, see the metrics drawn with
 * the numbers ClickHouse and the events hold, re-drive a dead letter, cancel a running crawl, and
 * see nothing of it as another user. (The re-drive comes before the slow crawl: the worker would
 * otherwise work through the cancelled crawl's queued, politely spaced fetches first.) Screenshots and timings go to test-artifacts/console/.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { JobCompleted, JobDispatched } from '@trawl/schemas';
import { headerStrings, readTopics } from '@trawl/streams';
import { ARTIFACTS_DIR, launchBrowser, pageEventually, screenshot } from './support/browser.ts';
import { startConsoleStack, type ConsoleStack } from './support/console-stack.ts';

let site: TestSite;
let stack: ConsoleStack;
let browser: Browser;
let page: Page;
let aliceKey: string;
let bobKey: string;
const spider = `console-e2e-${randomBytes(3).toString('hex')}`;
const slowSpider = `${spider}-slow`;
let jobId = '';
const timings: Record<string, number> = {};
// The content the crawls keep (formats), in a bucket of this test's own.
const bucket = `trawl-console-${randomBytes(4).toString('hex')}`;
const shots: string[] = [];

beforeAll(async () => {
  const started = Date.now();
  // The deadline is far above any stall of a busy worker, the slow trap far above the deadline.
  const fetchTimeoutMs = 5_000;
  site = await createTestSite({ pages: 40, linksPerPage: 3, itemsPerPage: 2, traps: true, slowMs: 4 * fetchTimeoutMs });
  stack = await startConsoleStack({ TRAWL_FETCH_RETRY_DELAYS_MS: '200,400,600', TRAWL_FETCH_TIMEOUT_MS: String(fetchTimeoutMs), TRAWL_S3_BUCKET: bucket });
  [aliceKey, bobKey] = await Promise.all([stack.key('alice'), stack.key('bob')]);
  const website = { name: 'Console test site', base_url: `${site.origin}/`, max_depth: 3, max_pages: 1000, ...site.spec };
  // Page starts 300 ms apart: the ~60 fetches span ~18 s (the slow trap's retries take ~21 s anyway),
  // so the browser's live feed joins while most pages are still to come, however fast the machine.
  expect((await stack.api(aliceKey, 'PUT', `/websites/${spider}`, { ...website, host_delay_ms: 300 })).status).toBe(201);
  // One page at a time, a second apart: a crawl that is still running when the test cancels it.
  expect((await stack.api(aliceKey, 'PUT', `/websites/${slowSpider}`, { ...website, name: 'Slow test site', host_concurrency: 1, host_delay_ms: 1000 })).status).toBe(201);
  browser = await launchBrowser();
  page = await browser.newPage();
  page.on('dialog', (d) => void d.accept());
  timings.stack_start_ms = Date.now() - started;
}, 180_000);

afterAll(async () => {
  writeFileSync(join(ARTIFACTS_DIR, 'timings.json'), JSON.stringify({ ...timings, screenshots: shots }, null, 2));
  await browser?.close();
  await stack?.stop();
  await site?.close();
  const content = new ContentStore({ ...contentStoreConfig(), bucket });
  await content.delete(await content.list()).catch(() => undefined);
  content.close();
}, 60_000);

async function signIn(key: string): Promise<void> {
  await page.goto(`${stack.baseUrl}/#/login`);
  await page.waitForSelector('#api-key');
  await page.$eval('#api-key', (el) => ((el as HTMLInputElement).value = ''));
  await page.type('#api-key', key);
  await page.click('#login-submit');
  await page.waitForFunction(() => location.hash.startsWith('#/jobs'), { timeout: 10_000 });
}

async function startCrawl(spiderId: string, depth: number, options: { keep?: boolean; reach?: boolean } = {}): Promise<string> {
  await page.click('#new-crawl');
  await page.waitForSelector('#crawl-form');
  await page.waitForFunction((id) => [...document.querySelectorAll('#crawl-spider option')].some((o) => (o as HTMLOptionElement).value === id), {}, spiderId);
  await page.type('#crawl-urls', site.home);
  await page.select('#crawl-spider', spiderId);
  await page.$eval('#crawl-depth', (el, d) => ((el as HTMLInputElement).value = String(d)), depth);
  await page.click('#crawl-fresh');
  if (options.keep) await page.click('#crawl-keep');
  if (options.reach) {
    // The folded options: a header, a user agent, link rules.
    await page.click('#crawl-reach summary');
    await page.type('#crawl-headers', 'X-Console: yes');
    await page.type('#crawl-user-agent', 'ConsoleBot/1.0');
    await page.click('#crawl-links summary');
    await page.type('#crawl-exclude', '/never-there/');
    await page.select('#crawl-scope', 'same_domain');
    await page.click('#crawl-follow-nofollow');
  }
  await page.click('#crawl-submit');
  await page.waitForFunction(() => /^#\/jobs\/[0-9a-f-]{36}/.test(location.hash), { timeout: 10_000 });
  return page.evaluate(() => /^#\/jobs\/([0-9a-f-]{36})/.exec(location.hash)![1]!);
}

/**
 * Clicks what the selector finds at the moment of the click, inside the page: a job view renders
 * again as its data arrives, and an element handle taken a moment before may be gone by then
 * ("Node is detached from document").
 */
async function clickLive(selector: string): Promise<void> {
  await page.waitForFunction((sel) => {
    const el = document.querySelector<HTMLElement>(sel);
    el?.click();
    return el !== null;
  }, { timeout: 10_000 }, selector);
}

/** The spec the job was dispatched with. */
async function dispatchedSpec(id: string): Promise<JobDispatched['spec']> {
  const events = await stack.pipeline.waitFor((ev) => ev.some((e) => e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).job_id === id), 30_000, `JobDispatched of ${id}`);
  return (events.find((e) => e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).job_id === id)!.event.value as JobDispatched).spec;
}

async function completion(id: string, timeoutMs = 90_000): Promise<JobCompleted> {
  const events = await stack.pipeline.waitFor((ev) => ev.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === id), timeoutMs, `JobCompleted of ${id}`);
  return events.find((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === id)!.event.value as JobCompleted;
}

describe('the console', () => {
  it('signs in with a key, starts a crawl and follows it live to 100%', async () => {
    await page.goto(`${stack.baseUrl}/`);
    await page.waitForSelector('#login-form');
    shots.push(await screenshot(page, '01-sign-in'));
    await page.type('#api-key', 'trawl_not-a-real-key-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    await page.click('#login-submit');
    await page.waitForSelector('.notice-error');
    await signIn(aliceKey);
    expect(await page.$eval('#current-user', (el) => el.textContent)).toBe('alice');

    jobId = await startCrawl(spider, 3);
    expect((await dispatchedSpec(jobId)).store_in_cache).toBe(false);
    const started = Date.now();
    const final = await pageEventually(
      page,
      () => {
        const el = document.querySelector<HTMLElement>('#job-progress');
        return el?.dataset.percent === '100' && el.dataset.status === 'finished' ? { ...el.dataset } : null;
      },
      120_000,
      'progress 100% and finished',
    );
    timings.crawl_to_100_percent_ms = Date.now() - started;
    const done = await completion(jobId);
    // Live: the bar moved with feed events, through values between 0 and 100.
    expect(Number(final.liveEvents)).toBeGreaterThan(10);
    const history = final.history!.split(',').map(Number);
    expect(history.some((p) => p > 0 && p < 100)).toBe(true);
    expect(history[history.length - 1]).toBe(100);
    const counter = (key: string) => page.$eval(`[data-counter="${key}"] dd`, (el) => Number(el.textContent!.replace(/,/g, '')));
    await pageEventually(page, () => document.querySelector('[data-counter="fetched"] dd')?.textContent !== '0', 10_000, 'counters');
    expect(await counter('fetched')).toBe(done.pages_fetched);
    expect(await counter('failed')).toBe(done.pages_failed);
    expect(await counter('items')).toBe(done.items_extracted);
    expect(done.items_extracted).toBeGreaterThan(0);
    await page.waitForFunction(() => (document.querySelector('#job-log')?.childElementCount ?? 0) > 3);
    shots.push(await screenshot(page, '02-job-finished'));

    await clickLive('#tab-items');
    await page.waitForSelector('#job-items table tbody tr');
    expect(await page.$('#export-csv')).not.toBeNull();
    shots.push(await screenshot(page, '03-job-items'));
    await clickLive('#tab-pages');
    await page.waitForSelector('#job-pages table tbody tr.bad-row');
  }, 180_000);

  it("draws the crawl's metrics with ClickHouse's numbers", async () => {
    const done = await completion(jobId);
    // projector-ch writes in batches: wait until every fact of the job is in.
    const until = Date.now() + 60_000;
    let facts: { fetched: string; failed: string; retries: string; items: string } | undefined;
    for (;;) {
      [facts] = await stack.ch<{ fetched: string; failed: string; retries: string; items: string }>(
        `SELECT uniqExactIf(event_id, ok = 1) AS fetched, uniqExactIf(event_id, ok = 0) AS failed, sum(greatest(attempts, 1) - 1) AS retries,
                (SELECT uniqExact(event_id) FROM items WHERE job_id = '${jobId}') AS items
         FROM page_fetches WHERE job_id = '${jobId}'`,
      ).catch(() => []);
      if (facts && Number(facts.fetched) === done.pages_fetched && Number(facts.failed) === done.pages_failed && Number(facts.items) === done.items_extracted) break;
      if (Date.now() > until) throw new Error(`ClickHouse never caught up: ${JSON.stringify(facts)} vs ${JSON.stringify(done)}`);
      await new Promise((r) => setTimeout(r, 500));
    }

    // A fresh tab straight onto the dashboard: from page open to every chart drawn.
    const tab = await browser.newPage();
    const opened = Date.now();
    await tab.goto(`${stack.baseUrl}/#/metrics?range=15m&job=${jobId}&refresh=0`);
    await tab.waitForSelector('body[data-charts-drawn]', { timeout: 30_000 });
    timings.page_open_to_charts_drawn_wall_ms = Date.now() - opened;
    const inPage = await tab.evaluate(() => (window as unknown as { __trawlMetrics: { chartsDrawnMs: number; lastRequestMs: number } }).__trawlMetrics);
    timings.page_open_to_charts_drawn_ms = inPage.chartsDrawnMs;
    timings.metrics_request_ms = inPage.lastRequestMs;

    const sums = (id: string) => tab.$eval(`[data-chart="${id}"]`, (el) => JSON.parse((el as HTMLElement).dataset.sums!) as Record<string, number>);
    const points = (id: string) => tab.$eval(`[data-chart="${id}"]`, (el) => Number((el as HTMLElement).dataset.points));
    const throughput = await sums('throughput');
    expect(throughput['pages/min']).toBe(Number(facts!.fetched));
    expect(throughput['items/min']).toBe(Number(facts!.items));
    expect(throughput['pages/min']).toBe(done.pages_fetched);
    expect(throughput['items/min']).toBe(done.items_extracted);
    const failures = await sums('retries-dlq');
    expect(failures['dead letters/min']).toBe(done.pages_failed);
    expect(failures['retries/min']).toBe(Number(facts!.retries));
    expect(failures['retries/min']).toBeGreaterThan(0);
    const status = await sums('status-mix');
    expect(Object.values(status).reduce((a, b) => a + b, 0)).toBe(done.pages_fetched + done.pages_failed);
    for (const id of ['throughput', 'fetch-time', 'status-mix', 'bytes', 'retries-dlq']) expect(await points(id), id).toBeGreaterThan(0);
    // The tables and headline figures come in a second request, after the charts.
    await tab.waitForSelector('#panel-top-hosts', { timeout: 30_000 });
    expect(await tab.$eval('[data-kpi="pages"] .kpi-value', (el) => el.textContent)).toBe(String(done.pages_fetched));
    expect(await tab.$eval('[data-kpi="items"] .kpi-value', (el) => el.textContent)).toBe(String(done.items_extracted));
    expect(await tab.$eval('[data-kpi="failed"] .kpi-value', (el) => el.textContent)).toBe(String(done.pages_failed));
    expect(await tab.$$eval('#panel-top-hosts tbody tr', (rows) => rows.length)).toBeGreaterThan(0);
    expect(await tab.$$eval('#panel-errors-by-kind tbody tr', (rows) => rows.length)).toBeGreaterThan(0);
    await tab.waitForSelector('#panel-lag', { timeout: 20_000 });
    shots.push(await screenshot(tab, '04-metrics'));
    await tab.close();
  }, 120_000);

  it('re-drives a dead letter to its origin topic', async () => {
    await page.goto(`${stack.baseUrl}/#/dead-letters`);
    const row = '[data-dead-letter]';
    await page.waitForSelector(row, { timeout: 20_000 });
    const target = await page.$$eval(row, (rows) => rows.find((r) => r.textContent?.includes('/trap/always-503'))?.getAttribute('data-dead-letter'));
    expect(target).toBeTruthy();
    shots.push(await screenshot(page, '06-dead-letters'));
    await page.click(`[data-redrive="${target}"]`);
    await page.waitForSelector(`[data-redriven="${target}"]`, { timeout: 20_000 });
    shots.push(await screenshot(page, '07-dead-letter-redriven'));

    const [, partition, offset] = /^fetch-(\d+)-(\d+)$/.exec(target!)!;
    const dlq = await readTopics(stack.pipeline.kafka, [stack.pipeline.topics.fetchDlq]);
    const original = dlq.find((m) => m.partition === Number(partition) && m.offset === offset)!;
    const fetches = await readTopics(stack.pipeline.kafka, [stack.pipeline.topics.fetch]);
    const republished = fetches.filter((m) => headerStrings(m.headers)['trawl-redrive-of'] === `${stack.pipeline.topics.fetchDlq}/${partition}/${offset}`);
    expect(republished).toHaveLength(1);
    expect(republished[0]!.value!.equals(original.value!)).toBe(true);
    expect(republished[0]!.key!.equals(original.key!)).toBe(true);
    // What happens next is the worker's: it skips fetches of jobs that are over (apps/services/worker
    // ended-jobs.ts), so a finished job's re-driven fetch is not fetched again.
  }, 120_000);

  it('cancels a running job', async () => {
    await page.goto(`${stack.baseUrl}/#/jobs`);
    await page.waitForSelector('#new-crawl');
    // Started with "keep the pages for your next crawl" ticked: its spec keeps bodies for the HTTP
    // cache; and with the folded reach and link options, which its spec carries.
    const id = await startCrawl(slowSpider, 3, { keep: true, reach: true });
    expect(await dispatchedSpec(id)).toMatchObject({
      store_in_cache: true,
      // Header values are credentials: the spec carries them sealed.
      headers: { 'x-console': expect.stringMatching(/^tsec1\./) },
      user_agent: 'ConsoleBot/1.0',
      exclude_patterns: ['/never-there/'],
      scope: 'same_domain',
      follow_nofollow: true,
      honour_canonical: true,
    });
    await pageEventually(page, () => Number(document.querySelector('[data-counter="fetched"] dd')?.textContent ?? 0) >= 2, 60_000, 'two pages fetched');
    await page.click('#cancel-job');
    await pageEventually(page, () => document.querySelector<HTMLElement>('#job-progress')?.dataset.status === 'cancelled', 60_000, 'cancelled');
    const done = await completion(id);
    expect(done.outcome).toBe('cancelled');
    expect(done.pages_fetched).toBeLessThan(site.expected(3).fetched.length);
    shots.push(await screenshot(page, '05-job-cancelled'));
  }, 120_000);

  it("shows a page's stored content as text, never as markup, and a scheduled run's changes", async () => {
    // A site whose home page shows markup as text (its Markdown then holds a <script> and an
    // onerror=), and a news page that changes between the schedule's two runs.
    let edition = 1;
    const pages = (): Record<string, string> => ({
      '/': '<h1>Markup, shown</h1><p>A page that shows markup as text.</p><pre><code>&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=x onerror="window.__pwned = 2"&gt;</code></pre><a href="/news">news</a>',
      '/news': `<h1>News</h1><p>Edition ${edition} of the news.</p>`,
    });
    const hostile = createServer((req, res) => {
      const body = pages()[new URL(req.url ?? '/', 'http://x').pathname];
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body ? `<!doctype html><html><head><title>Hostile</title></head><body><main>${body}</main></body></html>` : 'no');
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    try {
      stack.pipeline.spawn('dispatcher');
      const soon = () => new Date(Date.now() + 2_000).toISOString();
      const created = await stack.api<{ schedule_id: string; job_id: string }>(aliceKey, 'POST', '/crawl', { start_urls: [`${origin}/`], depth: 1, interval: '1h', schedule_at: soon(), formats: ['markdown'] });
      expect(created.status).toBe(202);
      const run1 = created.body.job_id;
      await completion(run1, 120_000);
      edition = 2;
      expect((await stack.api(aliceKey, 'PATCH', `/schedules/${created.body.schedule_id}`, { schedule_at: soon() })).status).toBe(200);
      const isRun2 = (e: { event: { name: string; value: unknown } }) =>
        e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).schedule_id === created.body.schedule_id && (e.event.value as JobDispatched).job_id !== run1;
      const run2 = ((await stack.pipeline.waitFor((ev) => ev.some(isRun2), 60_000, 'the second run')).find(isRun2)!.event.value as JobDispatched).job_id;
      await completion(run2, 120_000);
      type Counts = { status: string; settled: boolean; pages: { counts: { changed: number; unchanged: number } } };
      const settled = async () => {
        const c = (await stack.api<Counts>(aliceKey, 'GET', `/jobs/${run2}/changes`)).body;
        return c.status === 'finished' && c.settled && c.pages.counts.changed + c.pages.counts.unchanged === 2;
      };
      for (let until = Date.now() + 60_000; !(await settled()); await new Promise((r) => setTimeout(r, 500))) if (Date.now() > until) throw new Error('the second run never settled');

      await page.goto(`${stack.baseUrl}/#/jobs/${run2}`);
      await page.waitForSelector('#tab-changes');
      await clickLive('#tab-changes');
      await page.waitForSelector('[data-change-count="pages-changed"]');
      const count = (key: string) => page.$eval(`[data-change-count="${key}"] dd`, (el) => el.textContent);
      expect({ changed: await count('pages-changed'), unchanged: await count('pages-unchanged'), new: await count('pages-new'), gone: await count('pages-gone') }).toEqual({ changed: '1', unchanged: '1', new: '0', gone: '0' });
      expect(await page.$eval('#change-headline', (el) => el.textContent)).toContain(run1.slice(0, 8));
      await clickLive('[data-change-section="pages-changed"] [data-view-content]');
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#page-content-body')?.dataset.loaded === 'markdown');
      expect(await page.$eval('#page-content-body', (el) => el.textContent)).toContain('Edition 2 of the news.');
      shots.push(await screenshot(page, '09-job-changes'));

      const listed = await stack.api<{ pages: { fetch_id: string; url: string }[] }>(aliceKey, 'GET', `/jobs/${run2}/pages`);
      const home = listed.body.pages.find((x) => x.url === `${origin}/`)!.fetch_id;
      await clickLive('#tab-pages');
      await page.waitForSelector(`#job-pages [data-view-content="${home}"]`);
      await clickLive(`#job-pages [data-view-content="${home}"]`);
      await page.waitForFunction(() => {
        const el = document.querySelector<HTMLElement>('#page-content-body');
        return el?.dataset.loaded === 'markdown' && el.textContent?.includes('Markup, shown');
      });
      const text = await page.$eval('#page-content-body', (el) => el.textContent);
      expect(text).toContain('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">');
      expect(await page.$$eval('#page-content script, #page-content img', (els) => els.length)).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      shots.push(await screenshot(page, '10-page-content'));
    } finally {
      hostile.closeAllConnections();
      await new Promise((r) => hostile.close(r));
    }
  }, 300_000);

  it('scrapes one URL from the Scrape page and shows each format and the items as text, never as markup', async () => {
    // A page whose content is hostile three ways: markup shown as text (in its Markdown), an
    // onerror= in its HTML, a <script> closer inside its JSON-LD (in its metadata).
    const hostile = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><head><title>Scrape me</title><meta property="og:title" content="OG &lt;b&gt;title&lt;/b&gt;">' +
          '<script type="application/ld+json">{"@type":"Product","name":"<\\/script><img src=x onerror=\\"window.__pwned = 5\\">"}</script></head>' +
          '<body><main><h1>Scrape me</h1><pre><code>&lt;script&gt;window.__pwned = 3&lt;/script&gt;</code></pre><img src="x" onerror="window.__pwned = 4"><a href="/next">next</a></main></body></html>',
      );
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    const shown = async (format: string): Promise<string> => {
      await clickLive(`[data-scrape-format="${format}"]`);
      await page.waitForSelector(`#scrape-body[data-shown="${format}"]`);
      return page.$eval('#scrape-body', (el) => el.textContent ?? '');
    };
    try {
      await signIn(aliceKey);
      await page.click('a[data-route="scrape"]');
      await page.waitForSelector('#scrape-form');
      await page.type('#scrape-url', `${origin}/`);
      // markdown, links and metadata are ticked already.
      await page.click('#scrape-format-html');
      await page.click('#scrape-format-text');
      const started = Date.now();
      await page.click('#scrape-submit');
      await page.waitForSelector('#scrape-result[data-job-id]', { timeout: 60_000 });
      timings.console_scrape_ms = Date.now() - started;
      const scrapeJob = await page.$eval('#scrape-result', (el) => (el as HTMLElement).dataset.jobId!);
      expect(await page.$eval('#scrape-job', (el) => el.getAttribute('href'))).toBe(`#/jobs/${scrapeJob}`);
      expect((await stack.api(aliceKey, 'GET', `/jobs/${scrapeJob}/status`)).status).toBe(200);
      expect(await page.$$eval('[data-scrape-format]', (els) => els.map((el) => (el as HTMLElement).dataset.scrapeFormat))).toEqual(['markdown', 'html', 'text', 'links', 'metadata']);
      expect(await shown('markdown')).toContain('<script>window.__pwned = 3</script>');
      expect(await shown('html')).toContain('onerror="window.__pwned = 4"');
      expect(await shown('text')).toContain('Scrape me');
      await shown('links');
      expect(await page.$$eval('#scrape-body li', (els) => els.map((el) => el.textContent))).toContain(`${origin}/next`);
      const metadata = JSON.parse(await shown('metadata')) as { title: string; json_ld: { name: string }[] };
      expect(metadata.title).toBe('Scrape me');
      expect(metadata.json_ld[0]!.name).toContain('onerror=');
      // Not one element of the page's own made it into the console, nor ran.
      expect(await page.$$eval('#scrape-result script, #scrape-result img, #scrape-result b', (els) => els.length)).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      shots.push(await screenshot(page, '11-scrape'));

      // With a spider: the scrape's items, from its job.
      await page.$eval('#scrape-url', (el) => ((el as HTMLInputElement).value = ''));
      await page.type('#scrape-url', site.home);
      await page.select('#scrape-spider', spider);
      await page.click('#scrape-submit');
      await page.waitForFunction((previous) => {
        const el = document.querySelector<HTMLElement>('#scrape-result');
        return el?.dataset.jobId !== undefined && el.dataset.jobId !== previous;
      }, { timeout: 60_000 }, scrapeJob);
      await clickLive('[data-scrape-format="items"]');
      await page.waitForSelector('#scrape-body[data-loaded="items"]', { timeout: 20_000 });
      expect(await page.$$eval('#scrape-items tbody tr', (rows) => rows.length)).toBeGreaterThan(0);
      expect(await page.$eval('[data-scrape-format="items"]', (el) => el.textContent)).toBe('items');
      shots.push(await screenshot(page, '12-scrape-items'));
    } finally {
      hostile.closeAllConnections();
      await new Promise((r) => hostile.close(r));
    }
  }, 180_000);

  it("shows another user none of it", async () => {
    await page.click('#sign-out');
    await page.waitForSelector('#login-form');
    await signIn(bobKey);
    expect(await page.$eval('#current-user', (el) => el.textContent)).toBe('bob');
    await page.waitForSelector('#jobs-list .empty');
    await page.goto(`${stack.baseUrl}/#/dead-letters`);
    await page.waitForSelector('#dead-letters .empty');
    await page.goto(`${stack.baseUrl}/#/jobs/${jobId}`);
    await page.waitForSelector('.notice-error');
    expect(await page.$eval('.notice-error', (el) => el.textContent)).toContain('not found');
    await page.goto(`${stack.baseUrl}/#/metrics?range=15m&refresh=0`);
    await page.waitForSelector('body[data-charts-drawn]');
    await page.waitForFunction(() => document.querySelector('[data-kpi="pages"] .kpi-value')?.textContent === '0');
    expect(await page.$eval('[data-chart="throughput"]', (el) => (el as HTMLElement).dataset.points)).toBe('0');
    shots.push(await screenshot(page, '08-other-user-metrics'));

    expect((await stack.api(bobKey, 'GET', `/jobs/${jobId}/status`)).status).toBe(404);
    expect((await stack.api(bobKey, 'GET', `/metrics/scrape?job_id=${jobId}`)).status).toBe(404);
    expect((await stack.api<{ dead_letters: unknown[] }>(bobKey, 'GET', '/dead-letters')).body.dead_letters).toEqual([]);
    const alices = await stack.api<{ dead_letters: { id: string }[] }>(aliceKey, 'GET', '/dead-letters');
    expect(alices.body.dead_letters.length).toBeGreaterThan(0);
    expect((await stack.api(bobKey, 'POST', `/dead-letters/${alices.body.dead_letters[0]!.id}/redrive`)).status).toBe(404);
    const bobMetrics = await stack.api<{ totals: { pages: number } }>(bobKey, 'GET', '/metrics/scrape');
    expect(bobMetrics.body.totals.pages).toBe(0);
  }, 60_000);
});
