import type { CrawlSpec } from '@trawl/schemas';
import { compileRules, type CrawlRules } from '../rules/crawl-rules.ts';

/**
 * Compiled rules by job. Every FetchRequested carries its job's spec; compiling its regexes for every
 * page would be waste, so the worker keeps the last `max` jobs' rules (a job's spec never changes).
 */
export class RulesCache {
  private readonly byJob = new Map<string, CrawlRules>();
  constructor(private readonly max = 1_000) {}

  get(jobId: string, spec: CrawlSpec): CrawlRules {
    let rules = this.byJob.get(jobId);
    if (!rules) {
      rules = compileRules(spec);
      if (this.byJob.size >= this.max) this.byJob.delete(this.byJob.keys().next().value!);
      this.byJob.set(jobId, rules);
    }
    return rules;
  }
}
