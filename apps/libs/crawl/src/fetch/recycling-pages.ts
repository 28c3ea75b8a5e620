import type { Browser, LaunchOptions, Page } from 'puppeteer-core';
import type { ClusterOptions } from 'puppeteer-cluster';

type ConcurrencyClass = ClusterOptions['concurrency'];

interface PuppeteerLike {
  launch(options: LaunchOptions): Promise<Browser>;
}

/**
 * A puppeteer-cluster concurrency model: one Chromium, one tab per cluster worker, reused for
 * `recycleAfter` pages and then closed and reopened. Reuse saves a tab's start-up (and the request
 * interception set-up) on every page; recycling bounds what a long-lived tab accumulates (memory,
 * listeners, service workers). If Chromium dies, `repair` relaunches it and every tab is rebuilt.
 */
export function recyclingPages(recycleAfter: number, setupTab: (page: Page) => Promise<void>): ConcurrencyClass {
  class RecyclingPages {
    private browser: Browser | null = null;
    private generation = 0;
    private relaunching: Promise<void> | null = null;

    constructor(
      private readonly options: LaunchOptions,
      private readonly puppeteer: PuppeteerLike,
    ) {}

    async init(): Promise<void> {
      this.browser = await this.puppeteer.launch(this.options);
    }

    async close(): Promise<void> {
      await this.browser?.close();
      this.browser = null;
    }

    async workerInstance() {
      let page: Page | null = null;
      let uses = 0;
      let generation = this.generation;
      const fresh = async (): Promise<Page> => {
        if (page && !page.isClosed()) await page.close().catch(() => undefined);
        page = await this.browser!.newPage();
        await setupTab(page);
        uses = 0;
        generation = this.generation;
        return page;
      };
      return {
        jobInstance: async () => {
          if (this.relaunching) await this.relaunching;
          const current = !page || page.isClosed() || uses >= recycleAfter || generation !== this.generation ? await fresh() : page;
          uses++;
          // The tab outlives the job: closing it is the recycling's business, not the job's.
          return { resources: { page: current }, close: async () => undefined };
        },
        close: async () => {
          if (page && !page.isClosed()) await page.close().catch(() => undefined);
          page = null;
        },
        repair: async () => {
          page = null;
          await this.relaunch();
        },
      };
    }

    private relaunch(): Promise<void> {
      if (this.browser?.connected) return Promise.resolve();
      this.relaunching ??= (async () => {
        await this.browser?.close().catch(() => undefined);
        this.browser = await this.puppeteer.launch(this.options);
        this.generation++;
      })().finally(() => (this.relaunching = null));
      return this.relaunching;
    }
  }
  return RecyclingPages as unknown as ConcurrencyClass;
}
