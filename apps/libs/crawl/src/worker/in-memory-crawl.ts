import type { FetchRequested, JobCompleted, JobDispatched, PageFailed, PageFetched } from '@trawl/schemas';
import { isRetriable } from '../errors.ts';
import { decide, type FrontierEmit, type FrontierEvent } from '../frontier/decide.ts';
import { initialFrontierState, type FrontierState } from '../frontier/frontier-state.ts';
import type { PageProcessor } from './page-processor.ts';
import { pageEvents, pageFailedEvent } from './worker-events.ts';
import { withInlineSpec, type FetchWithSpec } from '../spec/spec-reference.ts';

export interface InMemoryCrawlResult {
  readonly requested: FetchRequested[];
  readonly fetched: PageFetched[];
  readonly failed: PageFailed[];
  readonly items: number;
  readonly completed: JobCompleted[];
  readonly emitted: FrontierEmit[];
  readonly state: FrontierState;
}

/**
 * The whole crawl loop in one process, with no Kafka: frontier decisions, a worker pool of
 * `concurrency`, retries of retriable failures (immediately, up to `maxAttempts`). It is how the crawl
 * logic is tested end to end against a real HTTP server, and a reference for the Kafka wiring, which
 * does the same with topics in between.
 */
export async function crawlInMemory(dispatch: JobDispatched, processor: PageProcessor, options: { concurrency?: number; maxAttempts?: number } = {}): Promise<InMemoryCrawlResult> {
  const concurrency = options.concurrency ?? 8;
  const maxAttempts = options.maxAttempts ?? 3;
  let state = initialFrontierState(dispatch.job_id);
  const result = { requested: [] as FetchRequested[], fetched: [] as PageFetched[], failed: [] as PageFailed[], items: 0, completed: [] as JobCompleted[], emitted: [] as FrontierEmit[] };
  const queue: { request: FetchWithSpec; attempt: number }[] = [];
  let running = 0;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));

  const apply = (event: FrontierEvent) => {
    const d = decide(state, event, { reuseState: true });
    state = d.state;
    for (const e of d.emit) {
      result.emitted.push(e);
      if (e.type === 'FetchRequested') {
        result.requested.push(e.data);
        queue.push({ request: withInlineSpec(e.data), attempt: 1 });
      } else if (e.type === 'JobCompleted') result.completed.push(e.data);
    }
  };

  const pump = () => {
    while (running < concurrency && queue.length > 0) {
      const job = queue.shift()!;
      running++;
      processor
        .process(job.request)
        .then(
          (page) => {
            const { items, fetched } = pageEvents(job.request, page, job.attempt);
            result.fetched.push(fetched);
            result.items += items.length;
            apply({ type: 'PageFetched', data: fetched });
          },
          (err: unknown) => {
            if (isRetriable(err) && job.attempt < maxAttempts) {
              queue.push({ request: job.request, attempt: job.attempt + 1 });
              return;
            }
            const failed = pageFailedEvent(job.request, err, job.attempt);
            result.failed.push(failed);
            apply({ type: 'PageFailed', data: failed });
          },
        )
        .finally(() => {
          running--;
          pump();
          if (running === 0 && queue.length === 0) done();
        });
    }
  };

  apply({ type: 'JobDispatched', data: dispatch });
  if (queue.length === 0) done();
  pump();
  await finished;
  return { ...result, state };
}
