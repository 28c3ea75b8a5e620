/**
 * What a render does between navigation and taking the HTML: the spec's browser actions
 * (CrawlSpec.actions) in order, then the list expansion its pagination type asks for
 * (`infinite_scroll`, `load_more`), then the captures its formats ask for (`screenshot`, `pdf`).
 *
 * Everything is bounded, because a page decides how long it takes:
 * - at most {@link MAX_ACTIONS} actions (the API refuses more; a worker fails a longer list);
 * - each action within its own time limit: its `ms`, else TRAWL_BROWSER_ACTION_TIMEOUT_MS, never
 *   over TRAWL_BROWSER_ACTION_MAX_MS (a `wait` action's `ms` is how long it waits, same cap);
 * - scrolls and "load more" clicks at most TRAWL_BROWSER_MAX_SCROLLS rounds each;
 * - all of it within TRAWL_BROWSER_ACTIONS_BUDGET_MS of the render, and within the page's own
 *   budget: when the page's signal aborts (TRAWL_PAGE_BUDGET_MS ran out) the next step stops.
 *
 * "New content" is the document's scroll height or element count changing within
 * TRAWL_BROWSER_SETTLE_MS after a scroll or a click: a list whose script added nothing by then is
 * at its end. A list that is still growing when its rounds or the budget run out is taken as it is
 * (an endless feed is a normal page); an action that cannot do what it says (a selector that never
 * appears, a key that does not exist) fails the page with TRAWL_ACTION_FAILED, naming the action's
 * index and type and never the text it types.
 *
 * Captures are bounded while they are made, not only once made (a page decides its own size too):
 * a full-page screenshot is clipped to TRAWL_BROWSER_SCREENSHOT_MAX_WIDTH × _HEIGHT from the top
 * left (a viewport one is the viewport's size), and a PDF prints at most TRAWL_BROWSER_PDF_MAX_PAGES
 * pages and is read from Chromium as a stream that stops past the body limit (`maxBytes`). The
 * fetcher's byte check on what comes back stays as the last resort.
 */
import { TimeoutError, type KeyInput, type Page } from 'puppeteer-core';
import type { BrowserAction } from '@trawl/schemas';
import { ActionFailedError, BodyTooLargeError, FetchAbortedError } from '../errors.ts';
import { MAX_ACTIONS, type ActionLimits, type BrowserWork, type PageCaptures } from './browser-work.ts';

export interface ActionContext {
  readonly limits: ActionLimits;
  /** Opens a sealed (`tsec1.…`) text of a type action; without it, such an action fails. */
  readonly open?: ((sealed: string) => string) | undefined;
  /** The page's budget: aborted, nothing more is started. */
  readonly signal?: AbortSignal | undefined;
  /** The most bytes a capture may have (the fetcher's body limit): a PDF stream past it is stopped. */
  readonly maxBytes?: number | undefined;
}

const SEALED_PREFIX = 'tsec1.';
/** The least time an action (but a wait) is started with. */
const MIN_ACTION_MS = 100;

// The page's globals as the functions evaluated in it use them: declared here because the
// packages that compile this file do not all have the DOM's types.
declare const document: { readonly documentElement: { readonly scrollHeight: number; readonly scrollWidth: number }; getElementsByTagName(name: string): { readonly length: number } };
declare const window: { scrollTo(x: number, y: number): void };

/** Runs a render's work on `page`; throws ActionFailedError (or FetchAbortedError when the page's budget ran out). */
export async function runBrowserWork(page: Page, work: BrowserWork, ctx: ActionContext): Promise<PageCaptures> {
  const until = performance.now() + ctx.limits.budgetMs;
  const run = new Run(page, ctx, until);
  if (work.actions.length > MAX_ACTIONS) throw new ActionFailedError(-1, 'actions', `${work.actions.length} actions; at most ${MAX_ACTIONS} run on a page`);
  try {
    let screenshot: Uint8Array | undefined;
    for (const [index, action] of work.actions.entries()) {
      const shot = await run.action(index, action);
      if (shot) screenshot = shot;
    }
    if (work.expand?.kind === 'infinite_scroll') await run.scrollToEnd(until);
    else if (work.expand?.kind === 'load_more') await run.loadMore(work.expand.selector);
    if (work.capture.screenshot && !screenshot) screenshot = await run.capture('screenshot', () => screenshotOf(page, false, ctx.limits));
    const pdf = work.capture.pdf ? await run.capture('pdf', (timeout) => pdfOf(page, ctx, timeout)) : undefined;
    return { ...(screenshot ? { screenshot } : {}), ...(pdf ? { pdf } : {}) };
  } finally {
    // An action given up on its time limit may still be in a loop: it stops at its next round,
    // before the tab serves another render.
    run.stop();
  }
}

class Run {
  constructor(
    private readonly page: Page,
    private readonly ctx: ActionContext,
    private readonly until: number,
  ) {}

  private stopped = false;

  /** What is left of the render's budget, in ms. */
  private left(): number {
    return Math.max(0, Math.floor(this.until - performance.now()));
  }

  stop(): void {
    this.stopped = true;
  }

  /** Whether a loop may take another round: the render goes on, `deadline` (a performance.now() time) not passed. */
  private going(deadline: number): boolean {
    return !this.stopped && !this.ctx.signal?.aborted && performance.now() < Math.min(deadline, this.until);
  }

  private checkSignal(): void {
    if (this.ctx.signal?.aborted) throw new FetchAbortedError('the page budget ran out during its browser actions');
  }

  /** An action's time limit: its own `ms`, else the default, capped, and within what is left of the budget (`cut`: by it). */
  private limitOf(action: BrowserAction): { limit: number; cut: boolean } {
    const wanted = Math.min(action.type === 'wait' ? (action.ms ?? 0) : (action.ms ?? this.ctx.limits.actionTimeoutMs), this.ctx.limits.maxActionMs);
    const left = this.left();
    return { limit: Math.min(wanted, left), cut: left < wanted };
  }

  /** A wait of at most `ms` within what is left; never 0, which puppeteer reads as "no time limit". */
  private upTo(ms: number): number {
    return Math.max(1, Math.min(ms, this.left()));
  }

  async action(index: number, action: BrowserAction): Promise<Uint8Array | undefined> {
    this.checkSignal();
    const fail = (reason: string, cause?: unknown) => new ActionFailedError(index, action.type, reason, action.type === 'type' || cause === undefined ? undefined : { cause });
    const { limit, cut } = this.limitOf(action);
    // Less than MIN_ACTION_MS left is none: an action given 3 ms would fail as if its selector were missing.
    if (limit < MIN_ACTION_MS && action.type !== 'wait') throw fail(`the render's action budget (${this.ctx.limits.budgetMs} ms) ran out`);
    const need = (field: 'selector' | 'key' | 'text'): string => {
      const value = action[field];
      if (value === null || value === '') throw fail(`needs a ${field}`);
      return value;
    };
    try {
      return await within(limit, this.ctx.signal, async () => {
        switch (action.type) {
          case 'wait_for':
            await this.page.waitForSelector(need('selector'), { timeout: limit });
            return undefined;
          case 'click': {
            const el = await this.page.waitForSelector(need('selector'), { visible: true, timeout: limit });
            await el!.click();
            await this.quiet();
            return undefined;
          }
          case 'type': {
            const text = this.clear(need('text'), fail);
            if (action.selector) await (await this.page.waitForSelector(action.selector, { visible: true, timeout: limit }))!.type(text);
            else await this.page.keyboard.type(text);
            return undefined;
          }
          case 'press':
            await this.page.keyboard.press(need('key') as KeyInput);
            await this.quiet();
            return undefined;
          case 'wait':
            await new Promise((resolve) => setTimeout(resolve, limit));
            return undefined;
          case 'scroll':
            // A round may take the settle time: the last one starts early enough to end within the limit.
            await this.scroll(action, fail, performance.now() + Math.max(limit - this.ctx.limits.settleMs, limit / 2));
            return undefined;
          case 'screenshot':
            return await screenshotOf(this.page, action.full_page, this.ctx.limits);
          default:
            throw fail('is not a known action');
        }
      });
    } catch (err) {
      if (err instanceof ActionFailedError || err instanceof FetchAbortedError) throw err;
      throw fail(cut && isTimeout(err) ? `the render's action budget (${this.ctx.limits.budgetMs} ms) ran out during it` : reasonOf(err, limit, action), err);
    }
  }

  /** The clear text of a type action: a sealed one opened, never shown in an error. */
  private clear(text: string, fail: (reason: string) => ActionFailedError): string {
    if (!text.startsWith(SEALED_PREFIX)) return text;
    if (!this.ctx.open) throw fail('its text is sealed and this worker has no key to open it (TRAWL_SECRETS_KEY)');
    try {
      return this.ctx.open(text);
    } catch {
      throw fail('its sealed text could not be opened (a key that is no longer configured?)');
    }
  }

  /** After a click or key press: the requests it started (a fetch, a navigation) answered, at most the settle time. */
  private async quiet(): Promise<void> {
    await this.page.waitForNetworkIdle({ idleTime: 100, timeout: this.upTo(this.ctx.limits.settleMs) }).catch(() => undefined);
  }

  /**
   * `times` scrolls, or until the selector exists, or until nothing new appears, by `deadline` (the
   * action's time limit). Only a selector that never appeared is a failure: a scroll that ran out of
   * rounds or time has scrolled what it could.
   */
  private async scroll(action: BrowserAction, fail: (reason: string) => ActionFailedError, deadline: number): Promise<void> {
    const rounds = Math.min(action.times ?? this.ctx.limits.maxScrolls, this.ctx.limits.maxScrolls);
    if (action.times !== null) {
      for (let i = 0; i < rounds && this.going(deadline); i++) await this.scrollOnce();
      return;
    }
    if (action.selector) {
      for (let i = 0; ; i++) {
        if (await this.page.$(action.selector)) return;
        if (i >= rounds || !this.going(deadline)) throw fail(`${action.selector} did not appear after ${i} scrolls`);
        await this.scrollOnce();
      }
    }
    await this.scrollToEnd(deadline, rounds);
  }

  /** Scrolls to the bottom until nothing new appears, at most `rounds` times, by `deadline` and the budget. */
  async scrollToEnd(deadline: number, rounds = this.ctx.limits.maxScrolls): Promise<void> {
    for (let i = 0; i < rounds && this.going(deadline); i++) {
      if (!(await this.scrollOnce())) return;
    }
    this.checkSignal();
  }

  /** One scroll to the bottom; whether new content appeared within the settle time. */
  private async scrollOnce(): Promise<boolean> {
    const before = await snapshot(this.page);
    await this.page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    return this.grew(before);
  }

  /** Clicks the load-more button until it is gone, hidden, or nothing new appears, within the bounds. */
  async loadMore(selector: string): Promise<void> {
    for (let i = 0; i < this.ctx.limits.maxScrolls && this.going(this.until); i++) {
      const button = await this.page.$(selector);
      if (!button) return;
      // A button that is disabled while its previous page loads gets the settle time to come back.
      const enabled = await this.page
        .waitForFunction((el) => !(el as unknown as { disabled?: boolean }).disabled, { timeout: this.upTo(this.ctx.limits.settleMs), polling: 50 }, button)
        .then(() => true, () => false);
      if (!enabled || !(await button.isVisible())) return;
      const before = await snapshot(this.page);
      try {
        await button.click();
      } catch {
        // Gone or covered between the check and the click: the list is as long as it gets.
        return;
      }
      if (!(await this.grew(before))) return;
    }
    this.checkSignal();
  }

  /** Whether the document's height or element count changed within the settle time. */
  private async grew(before: readonly [number, number]): Promise<boolean> {
    const timeout = Math.min(this.ctx.limits.settleMs, this.left());
    if (timeout <= 0) return false;
    return this.page
      .waitForFunction(([h, n]) => document.documentElement.scrollHeight !== h || document.getElementsByTagName('*').length !== n, { timeout, polling: 50 }, before)
      .then(
        () => true,
        (err: unknown) => {
          if (err instanceof TimeoutError) return false;
          throw err;
        },
      );
  }

  /** A screenshot or PDF of the page as it is now, within what is left of the budget. */
  async capture(what: 'screenshot' | 'pdf', take: (timeout: number) => Promise<Uint8Array>): Promise<Uint8Array> {
    this.checkSignal();
    const limit = Math.min(this.ctx.limits.maxActionMs, this.left());
    if (limit <= 0) throw new ActionFailedError(-1, what, `the render's action budget (${this.ctx.limits.budgetMs} ms) ran out before it`);
    try {
      return await within(limit, this.ctx.signal, () => take(limit));
    } catch (err) {
      if (err instanceof FetchAbortedError || err instanceof BodyTooLargeError) throw err;
      throw new ActionFailedError(-1, what, err instanceof TimeoutError ? `took over ${limit} ms` : errorMessage(err), { cause: err });
    }
  }
}

/**
 * A PNG of the viewport (its size is the browser's, not the page's), or of the whole page clipped
 * to the limits from its top left: Chromium never paints more than that, however large the page.
 */
async function screenshotOf(page: Page, fullPage: boolean, limits: ActionLimits): Promise<Uint8Array> {
  if (!fullPage) return page.screenshot({ type: 'png' });
  const [width, height] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight] as [number, number]);
  const clip = { x: 0, y: 0, width: Math.max(1, Math.min(width, limits.screenshotMaxWidth)), height: Math.max(1, Math.min(height, limits.screenshotMaxHeight)) };
  return page.screenshot({ type: 'png', clip, captureBeyondViewport: true });
}

/**
 * The page printed, its first `pdfMaxPages` pages (Chromium caps a range past the end to the
 * document), read as a stream that is cancelled once it passes `maxBytes`: the PDF is refused
 * whole (BodyTooLargeError, as the fetcher's check would) without being held whole first.
 */
async function pdfOf(page: Page, ctx: ActionContext, timeout: number): Promise<Uint8Array> {
  const stream = await page.createPDFStream({ printBackground: true, timeout, pageRanges: `1-${ctx.limits.pdfMaxPages}` });
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (ctx.maxBytes !== undefined && bytes > ctx.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(`${page.url()}: its pdf is over the ${ctx.maxBytes}-byte limit`, ctx.maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Height and element count of the document, to tell whether a scroll or click added anything. */
function snapshot(page: Page): Promise<[number, number]> {
  return page.evaluate(() => [document.documentElement.scrollHeight, document.getElementsByTagName('*').length] as [number, number]);
}

class ActionTimeout extends Error {}

/** `work()` within `ms`, and stopped with the page's signal. */
async function within<T>(ms: number, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ActionTimeout()), ms + 250);
        onAbort = () => reject(new FetchAbortedError('the page budget ran out during its browser actions'));
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

function errorMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

function isTimeout(err: unknown): boolean {
  return err instanceof TimeoutError || err instanceof ActionTimeout;
}

/** Why an action failed, in words that never hold the text it types. */
function reasonOf(err: unknown, limit: number, action: BrowserAction): string {
  if (isTimeout(err)) return action.selector ? `${action.selector} not found within ${limit} ms` : `took over ${limit} ms`;
  const message = errorMessage(err);
  // What went wrong in typing could quote what was typed: only the where is said.
  if (action.type === 'type') return action.selector ? `could not type into ${action.selector}` : 'could not type';
  return message;
}
