/**
 * The worker's page budget (TRAWL_PAGE_BUDGET_MS): the wall clock of one page's fetch and parse,
 * from the moment its fetch starts — the wait for the host's politeness slot is not charged — to
 * the end of its parse. When it runs out, the page's signal aborts (its HTTP request is cut, its
 * browser render given up) and the handler fails with BudgetExceededError without waiting for it:
 * the consumer counts a delivery without an outcome, retries it through the tiers, and after
 * TRAWL_MAX_DELIVERIES dead-letters it as poison, which ends as the page's PageFailed.
 *
 * A page whose parse blocks the event loop lets no timer fire: the loop watchdog (runService,
 * TRAWL_LOOP_LIMIT_MS) kills the process instead, and delivery counting makes that page poison.
 *
 * The budget starts in the fetchers (pageFetchers): the crawl's PageProcessor hands the page's
 * signal to its fetch, and that signal finds its budget here.
 */
import { WorkBudget } from '@trawl/streams';
import type { PageFetcher } from '@trawl/crawl';

export const DEFAULT_PAGE_BUDGET_MS = 90_000;

const budgets = new WeakMap<AbortSignal, WorkBudget>();

/** A page's budget; its `signal` goes to PageProcessor.process, and the clock starts with the fetch. */
export function pageBudget(budgetMs: number, delivery: AbortSignal, url: string): WorkBudget {
  const budget = new WorkBudget(budgetMs, delivery, `the fetch and parse of ${url}`);
  budgets.set(budget.signal, budget);
  return budget;
}

/** Starts the budget of the page this signal belongs to (no-op for another signal, or once started). */
export function startBudgetOf(signal: AbortSignal): void {
  budgets.get(signal)?.start();
}

/** The fetcher, starting the page's budget when a fetch begins. */
export function budgetedFetcher<F extends PageFetcher>(fetcher: F): PageFetcher {
  return {
    fetch(url, options) {
      if (options?.signal) startBudgetOf(options.signal);
      return fetcher.fetch(url, options);
    },
  };
}

/** TRAWL_PAGE_BUDGET_MS, a positive number of ms. */
export function pageBudgetMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_PAGE_BUDGET_MS;
  if (raw === undefined || raw === '') return DEFAULT_PAGE_BUDGET_MS;
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`TRAWL_PAGE_BUDGET_MS must be a positive number of ms, got "${raw}"`);
  return ms;
}
