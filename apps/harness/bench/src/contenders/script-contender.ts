/**
 * Crawlee and the limit as contenders: a fresh child process per round (a library crawler is
 * started per crawl), timed from its first request to its last page — module loading excluded,
 * as Trawl's service start-up is — with its CPU and RSS read from /proc like Trawl's services.
 */
import { join } from 'node:path';
import { trawlHome } from '@trawl/streams';
import { ITEM_FIELDS, ITEM_ROOT } from '../site/site-model.ts';
import type { SiteProcess } from '../site/site-process.ts';
import { steadyPagesPerSecond } from '../site/site-stats.ts';
import { startScript } from '../measure/script-process.ts';
import { onInterrupt } from '../measure/on-interrupt.ts';
import { ProcessSampler, round, type GroupUsage } from '../measure/process-sampler.ts';
import type { CrawlerConfig, CrawlerResult } from './crawler-config.ts';

export type ScriptContenderName = 'crawlee' | 'limit';

export interface ScriptRun {
  readonly contender: ScriptContenderName;
  readonly pages: number;
  readonly failed: number;
  readonly items: number;
  readonly seconds: number;
  readonly pagesPerSecond: number;
  readonly processes: readonly GroupUsage[];
  readonly siteRequests: number;
  /** The child's own process.cpuUsage() over the crawl: a cross-check of /proc. */
  readonly selfCpuSeconds: number;
  /** Pages a second between the first and the last page the site served. */
  readonly phases: { readonly steadyPagesPerSecond: number | null };
}

const SCRIPTS: Record<ScriptContenderName, string> = {
  crawlee: 'contenders/crawlee-crawl.ts',
  limit: 'contenders/limit-crawl.ts',
};

export async function runScriptContender(
  name: ScriptContenderName,
  site: SiteProcess,
  options: { readonly concurrency: number; readonly crawleeAutoscale?: boolean; readonly timeoutMs?: number },
): Promise<ScriptRun> {
  await site.reset();
  const config: CrawlerConfig & { autoscale?: boolean } = {
    home: site.home,
    hosts: site.hosts,
    concurrency: options.concurrency,
    itemRoot: ITEM_ROOT,
    itemFields: ITEM_FIELDS.map((f) => ({ ...f })),
    ...(name === 'crawlee' && options.crawleeAutoscale ? { autoscale: true } : {}),
  };
  const child = startScript(SCRIPTS[name], { args: [JSON.stringify(config)], logFile: join(trawlHome(), 'logs', 'bench', `${name}.log`) });
  const forget = onInterrupt(() => child.stop('SIGKILL'));
  try {
    await child.waitFor((l) => l.phase === 'started', 120_000);
    const sampler = new ProcessSampler([
      { label: name, pids: () => [child.pid] },
      { label: 'site server', pids: () => [site.pid] },
    ]);
    sampler.start();
    const result = await child.waitFor<CrawlerResult>((l) => l.phase === 'done', options.timeoutMs ?? 30 * 60_000);
    const processes = sampler.stop();
    const stats = await site.stats();
    return {
      contender: name,
      pages: result.pages,
      failed: result.failed,
      items: result.items,
      seconds: round(result.seconds, 2),
      pagesPerSecond: round(result.pages / result.seconds, 1),
      processes,
      siteRequests: stats.requests,
      selfCpuSeconds: round(result.cpuSeconds, 2),
      phases: { steadyPagesPerSecond: steadyPagesPerSecond(stats) },
    };
  } finally {
    forget();
    await child.stop();
  }
}
