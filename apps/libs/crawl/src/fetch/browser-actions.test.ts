/**
 * Browser actions, list expansion and captures in the worker's Chromium, against the hard site's
 * dynamic lists (a list that loads by script on scroll, a "load more" button, a search form).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, expectedDynamicLists, type HardSite } from '@trawl/demo-site';
import type { BrowserAction } from '@trawl/schemas';
import { ActionFailedError } from '../errors.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { BrowserFetcher } from './browser-fetcher.ts';
import { browserWorkOf, DEFAULT_ACTION_LIMITS, MAX_ACTIONS, needsBrowser } from './browser-work.ts';
import { BodyTooLargeError } from '../errors.ts';
import { startLocalServer } from '../testing/local-server.ts';

const SEALED = 'tsec1.k1.sealed-query';
const open = (sealed: string) => {
  if (sealed !== SEALED) throw new Error('not sealed with this key');
  return expectedDynamicLists.search.query;
};

let site: HardSite;
let browser: BrowserFetcher;
let tight: BrowserFetcher;

beforeAll(async () => {
  site = await createHardSite();
  const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
  [browser, tight] = await Promise.all([
    BrowserFetcher.launch({ policy, concurrency: 2, navigationTimeoutMs: 10_000, open, actionLimits: { ...DEFAULT_ACTION_LIMITS, actionTimeoutMs: 2_000, maxActionMs: 5_000, maxScrolls: 20, settleMs: 700, budgetMs: 15_000 } }),
    BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 10_000, actionLimits: { ...DEFAULT_ACTION_LIMITS, actionTimeoutMs: 2_000, maxActionMs: 10_000, maxScrolls: 2, settleMs: 700, budgetMs: 3_000 } }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([browser?.close(), tight?.close()]);
  await site?.close();
});

const action = (a: Partial<BrowserAction> & Pick<BrowserAction, 'type'>): BrowserAction => ({ selector: null, text: null, key: null, ms: null, times: null, full_page: false, ...a });
const names = (html: string | null) => [...(html ?? '').matchAll(/<span class="name">([^<]*)<\/span>/g)].map((m) => m[1]);
const url = (path: string) => `${site.origin}${path}`;

async function failure(p: Promise<unknown>): Promise<ActionFailedError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ActionFailedError);
  return err as ActionFailedError;
}

describe('what a spec asks of the browser', () => {
  it('actions, a scrolled or load-more list, a screenshot or a PDF imply the browser', () => {
    expect(needsBrowser(testSpec())).toBe(false);
    expect(browserWorkOf(testSpec())).toBeNull();
    expect(needsBrowser(testSpec({ actions: [action({ type: 'wait', ms: 10 })] }))).toBe(true);
    expect(needsBrowser(testSpec({ pagination_type: 'infinite_scroll' }))).toBe(true);
    expect(browserWorkOf(testSpec({ pagination_type: 'load_more', load_more_selector: '#more' }))?.expand).toEqual({ kind: 'load_more', selector: '#more' });
    expect(browserWorkOf(testSpec({ formats: ['markdown', 'pdf'] }))?.capture).toEqual({ screenshot: false, pdf: true });
  });
});

describe('the browser fetcher with actions', () => {
  it('scrolls an infinite list to its last item', async () => {
    const r = await browser.fetch(url(expectedDynamicLists.scroll.path), { work: browserWorkOf(testSpec({ pagination_type: 'infinite_scroll' })) });
    expect(names(r.body)).toEqual(expectedDynamicLists.scroll.names);
    expect(r.body).toContain('the end');
  }, 30_000);

  it('clicks "load more" until the button is gone', async () => {
    const spec = testSpec({ pagination_type: 'load_more', load_more_selector: expectedDynamicLists.more.loadMoreSelector });
    const r = await browser.fetch(url(expectedDynamicLists.more.path), { work: browserWorkOf(spec) });
    expect(names(r.body)).toEqual(expectedDynamicLists.more.names);
    expect(r.body).not.toContain('id="load-more"');
  }, 30_000);

  it('without expansion takes the first page only', async () => {
    const r = await browser.fetch(url(expectedDynamicLists.more.path));
    expect(names(r.body)).toHaveLength(10);
  }, 30_000);

  it('runs actions in order, typing a sealed text it opens', async () => {
    const actions = [
      action({ type: 'wait_for', selector: '#q' }),
      action({ type: 'click', selector: '#exact' }),
      action({ type: 'type', selector: '#q', text: SEALED }),
      action({ type: 'press', key: 'Enter' }),
      action({ type: 'wait_for', selector: expectedDynamicLists.search.resultSelector }),
    ];
    const r = await browser.fetch(url(expectedDynamicLists.search.path), { work: browserWorkOf(testSpec({ actions })) });
    expect(r.body).toContain('query=trawl exact=true');
    for (const result of expectedDynamicLists.search.results) expect(r.body).toContain(result);
    // Out of order, the results are never there to wait for.
    const reversed = [actions[4]!, ...actions.slice(0, 4)].map((a, i) => (i === 0 ? { ...a, ms: 500 } : a));
    const err = await failure(browser.fetch(url(expectedDynamicLists.search.path), { work: browserWorkOf(testSpec({ actions: reversed })) }));
    expect(err.message).toMatch(/^actions\[0\] \(wait_for\) failed: #results li not found within 500 ms/);
  }, 30_000);

  it('scrolls as many times as asked, and until a selector appears', async () => {
    const twice = await browser.fetch(url(expectedDynamicLists.scroll.path), { work: browserWorkOf(testSpec({ actions: [action({ type: 'scroll', times: 2 })] })) });
    expect(names(twice.body)).toHaveLength(30);
    const until = await browser.fetch(url(expectedDynamicLists.scroll.path), { work: browserWorkOf(testSpec({ actions: [action({ type: 'scroll', selector: 'li.item:nth-child(35)' })] })) });
    expect(names(until.body).length).toBeGreaterThanOrEqual(40);
    expect(names(until.body).length).toBeLessThan(60);
  }, 30_000);

  it('fails the page naming the action, never the text it types', async () => {
    const typed = await failure(browser.fetch(url(expectedDynamicLists.search.path), { work: browserWorkOf(testSpec({ actions: [action({ type: 'type', selector: '#nowhere', text: 'hunter2', ms: 300 })] })) }));
    expect(typed.code).toBe('TRAWL_ACTION_FAILED');
    expect(typed.retriable).toBe(false);
    expect(typed.message).toMatch(/^actions\[0\] \(type\) failed: #nowhere not found within 300 ms/);
    expect(JSON.stringify({ message: typed.message, stack: typed.stack, cause: String(typed.cause) })).not.toContain('hunter2');
    const key = await failure(browser.fetch(url(expectedDynamicLists.search.path), { work: browserWorkOf(testSpec({ actions: [action({ type: 'wait', ms: 1 }), action({ type: 'press', key: 'NoSuchKey' })] })) }));
    expect(key.message).toMatch(/^actions\[1\] \(press\) failed: Unknown key/);
    // A sealed text with no key to open it.
    const sealed = await failure(tight.fetch(url(expectedDynamicLists.search.path), { work: browserWorkOf(testSpec({ actions: [action({ type: 'type', selector: '#q', text: SEALED })] })) }));
    expect(sealed.message).toMatch(/sealed/);
    expect(sealed.message).not.toContain(SEALED);
  }, 30_000);

  it('bounds the list, each action and the render', async () => {
    const many = Array.from({ length: MAX_ACTIONS + 1 }, () => action({ type: 'wait', ms: 1 }));
    expect((await failure(browser.fetch(url('/lists/search'), { work: browserWorkOf(testSpec({ actions: many })) }))).message).toMatch(/51 actions; at most 50/);
    // The render's budget (3 s here): a long wait is cut to it, and the next action finds none left.
    const started = performance.now();
    const spent = await failure(tight.fetch(url('/lists/search'), { work: browserWorkOf(testSpec({ actions: [action({ type: 'wait', ms: 20_000 }), action({ type: 'wait_for', selector: 'body' })] })) }));
    expect(spent.message).toMatch(/^actions\[1\] \(wait_for\) failed: the render's action budget/);
    // Not the 10 s the action's own cap allows.
    expect(performance.now() - started).toBeLessThan(8_000);
    // At most maxScrolls (2 here) rounds of an infinite list.
    const capped = await tight.fetch(url(expectedDynamicLists.scroll.path), { work: browserWorkOf(testSpec({ pagination_type: 'infinite_scroll' })) });
    expect(names(capped.body)).toHaveLength(30);
  }, 30_000);

  it('captures a screenshot (PNG) and a PDF of the page', async () => {
    const r = await browser.fetch(url(expectedDynamicLists.more.path), { work: browserWorkOf(testSpec({ formats: ['screenshot', 'pdf'] })) });
    const png = Buffer.from(r.captures!.screenshot!);
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.readUInt32BE(20)).toBe(600); // IHDR height: the viewport
    expect(Buffer.from(r.captures!.pdf!).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // A screenshot action is the page's screenshot: here the whole page.
    const full = await browser.fetch(url(expectedDynamicLists.more.path), { work: browserWorkOf(testSpec({ formats: ['screenshot'], actions: [action({ type: 'screenshot', full_page: true })] })) });
    expect(Buffer.from(full.captures!.screenshot!).readUInt32BE(20)).toBeGreaterThan(900);
    expect(full.captures!.pdf).toBeUndefined();
  }, 30_000);
});

describe('captures bounded while they are made', () => {
  // 30,000 px tall and 5,000 px wide, with lines of text: a page that would make a huge PNG and a PDF of ~30 pages.
  const TALL = '<!doctype html><body style="margin:0"><div id="t" style="width:5000px;height:30000px;background:linear-gradient(#fde,#def)"></div><script>const t=document.getElementById("t");for(let i=0;i<500;i++){const p=document.createElement("p");p.textContent="line "+i+" of a very tall page";t.appendChild(p)}</script>';

  it('clips a full-page screenshot to the limits and prints at most the PDF page limit; a PDF past the byte limit is refused', async () => {
    const server = await startLocalServer({ '/tall': (_q, r) => void r.writeHead(200, { 'content-type': 'text/html' }).end(TALL) });
    const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));
    const limits = { ...DEFAULT_ACTION_LIMITS, screenshotMaxWidth: 1_000, screenshotMaxHeight: 3_000, pdfMaxPages: 3 };
    const [bounded, small] = await Promise.all([
      BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 10_000, actionLimits: limits }),
      BrowserFetcher.launch({ policy, concurrency: 1, navigationTimeoutMs: 10_000, actionLimits: limits, maxBodyBytes: 4_000 }),
    ]);
    try {
      const spec = testSpec({ formats: ['screenshot', 'pdf'], actions: [action({ type: 'screenshot', full_page: true })] });
      const r = await bounded.fetch(`${server.origin}/tall`, { work: browserWorkOf(spec) });
      const png = Buffer.from(r.captures!.screenshot!);
      expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual({ width: 1_000, height: 3_000 });
      const pdf = Buffer.from(r.captures!.pdf!).toString('latin1');
      expect(pdf.startsWith('%PDF-')).toBe(true);
      // The page tree's count: the pages printed.
      expect(Math.max(...[...pdf.matchAll(/\/Count (\d+)/g)].map((m) => Number(m[1])))).toBe(3);
      const refused = await small.fetch(`${server.origin}/tall`, { work: browserWorkOf(testSpec({ formats: ['pdf'] })) }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BodyTooLargeError);
      expect((refused as Error).message).toContain('its pdf is over the 4000-byte limit');
    } finally {
      await Promise.all([bounded.close(), small.close()]);
      await server.close();
    }
  }, 60_000);
});
