/**
 * What a render of a job's page does besides navigating, read from its spec: the browser actions,
 * the list expansion (`infinite_scroll`, `load_more`), the captures (`screenshot`, `pdf`), and the
 * bounds on them all. Free of puppeteer, so that the frontier and the API can ask whether a spec
 * needs the browser and check its actions; the render itself is browser-actions.ts.
 */
import type { BrowserAction, CrawlSpec } from '@trawl/schemas';
import { envInteger } from '../config/env-integer.ts';

/** Actions in one list, a website's, a crawl's or a login's. */
export const MAX_ACTIONS = 50;
/** The largest time limit (or `wait`) one action may ask for, in ms, as the API checks it. */
export const MAX_ACTION_MS = 60_000;
/** The most `times` a scroll action may ask for, as the API checks it. */
export const MAX_SCROLL_TIMES = 100;

/** The worker's bounds on a render's actions (TRAWL_BROWSER_*). */
export interface ActionLimits {
  /** Time limit of an action that gives no `ms` (TRAWL_BROWSER_ACTION_TIMEOUT_MS). */
  readonly actionTimeoutMs: number;
  /** No action's time limit, nor a `wait`, is longer (TRAWL_BROWSER_ACTION_MAX_MS). */
  readonly maxActionMs: number;
  /** Scroll rounds of one scroll action or infinite scroll, and clicks of one load-more list (TRAWL_BROWSER_MAX_SCROLLS). */
  readonly maxScrolls: number;
  /** How long after a scroll or click new content may take to appear (TRAWL_BROWSER_SETTLE_MS). */
  readonly settleMs: number;
  /** Actions, list expansion and captures of one render together (TRAWL_BROWSER_ACTIONS_BUDGET_MS). */
  readonly budgetMs: number;
  /** A full-page screenshot is clipped to this many CSS pixels wide and high (TRAWL_BROWSER_SCREENSHOT_MAX_WIDTH / _HEIGHT). */
  readonly screenshotMaxWidth: number;
  readonly screenshotMaxHeight: number;
  /** A PDF prints at most this many pages (TRAWL_BROWSER_PDF_MAX_PAGES). */
  readonly pdfMaxPages: number;
}

export const DEFAULT_ACTION_LIMITS: ActionLimits = {
  actionTimeoutMs: 10_000,
  maxActionMs: 30_000,
  maxScrolls: 50,
  settleMs: 1_000,
  budgetMs: 45_000,
  // 2,000 × 8,000 px is at most 64 MB of bitmap in Chromium before PNG compresses it.
  screenshotMaxWidth: 2_000,
  screenshotMaxHeight: 8_000,
  pdfMaxPages: 30,
};

/** The limits from the environment, the defaults for what is unset; throws InvalidConfigError naming a bad value. */
export function actionLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): ActionLimits {
  const d = DEFAULT_ACTION_LIMITS;
  return {
    actionTimeoutMs: envInteger(env, 'TRAWL_BROWSER_ACTION_TIMEOUT_MS', d.actionTimeoutMs, 100),
    maxActionMs: envInteger(env, 'TRAWL_BROWSER_ACTION_MAX_MS', d.maxActionMs, 100),
    maxScrolls: envInteger(env, 'TRAWL_BROWSER_MAX_SCROLLS', d.maxScrolls, 1),
    settleMs: envInteger(env, 'TRAWL_BROWSER_SETTLE_MS', d.settleMs, 50),
    budgetMs: envInteger(env, 'TRAWL_BROWSER_ACTIONS_BUDGET_MS', d.budgetMs, 1_000),
    screenshotMaxWidth: envInteger(env, 'TRAWL_BROWSER_SCREENSHOT_MAX_WIDTH', d.screenshotMaxWidth, 100),
    screenshotMaxHeight: envInteger(env, 'TRAWL_BROWSER_SCREENSHOT_MAX_HEIGHT', d.screenshotMaxHeight, 100),
    pdfMaxPages: envInteger(env, 'TRAWL_BROWSER_PDF_MAX_PAGES', d.pdfMaxPages, 1),
  };
}

/** What a render does after navigation, from the job's spec; null when it only renders. */
export interface BrowserWork {
  readonly actions: readonly BrowserAction[];
  /** Expand the list after the actions: scroll until nothing new, or click the load-more button until it is gone. */
  readonly expand: { readonly kind: 'infinite_scroll' } | { readonly kind: 'load_more'; readonly selector: string } | null;
  /** Formats that only a browser makes, wanted of the page. */
  readonly capture: { readonly screenshot: boolean; readonly pdf: boolean };
}

/** Formats a page's render makes (the others derive from its HTML). */
export const CAPTURE_FORMATS = ['screenshot', 'pdf'] as const;

/** What of a spec decides its render; the fields besides requires_browser may be missing from older in-memory shapes. */
export type BrowserSpec = Pick<CrawlSpec, 'requires_browser'> & Partial<Pick<CrawlSpec, 'actions' | 'pagination_type' | 'load_more_selector' | 'formats'>>;

/** The render's work for this spec, or null when there is none. */
export function browserWorkOf(spec: BrowserSpec): BrowserWork | null {
  const expand = spec.pagination_type === 'infinite_scroll' ? ({ kind: 'infinite_scroll' } as const) : spec.pagination_type === 'load_more' && spec.load_more_selector ? ({ kind: 'load_more', selector: spec.load_more_selector } as const) : null;
  const formats = spec.formats ?? [];
  const actions = spec.actions ?? [];
  const capture = { screenshot: formats.includes('screenshot'), pdf: formats.includes('pdf') };
  if (actions.length === 0 && !expand && !capture.screenshot && !capture.pdf) return null;
  return { actions, expand, capture };
}

/**
 * Whether the spec's pages are rendered: it says so, or it asks for what only a browser does
 * (actions, a scrolled or load-more list, a screenshot or a PDF).
 */
export function needsBrowser(spec: BrowserSpec): boolean {
  return spec.requires_browser || browserWorkOf(spec) !== null;
}

/** What a render's work produced besides the HTML. */
export interface PageCaptures {
  /** PNG: the last screenshot action's, else one of the viewport when the format was asked for. */
  readonly screenshot?: Uint8Array;
  readonly pdf?: Uint8Array;
}
