/**
 * Who writes and who reads each topic of the catalogue: documentation, checked by nothing at run
 * time. docs/architecture.md's topic map is generated from the catalogue and this
 * (`npm run docs -w @trawl/checks`), and a test fails when a catalogue topic has no entry here.
 */
import { retryTopicName, TOPICS } from './catalogue.ts';

export interface TopicFlow {
  /** Services (and what they write) that produce to the topic. */
  readonly producers: readonly string[];
  /** Services that read the topic, with their consumer group. */
  readonly consumers: readonly string[];
}

const FLOWS: Readonly<Record<keyof typeof TOPICS, TopicFlow>> = {
  schedule: { producers: ['dispatcher (TargetDue)'], consumers: ['none: the audit log of due targets'] },
  jobs: {
    producers: ['api (CrawlRequested, JobDispatched, JobCancelled, JobPaused, JobResumed)', 'dispatcher (JobDispatched)', 'frontier (JobCompleted, JobFailed)'],
    consumers: [
      'frontier (`trawl-frontier`)',
      'projector-pg (`trawl-projection-pg-v5`)',
      'projector-ch (`trawl-projection-ch-v2`)',
      'webhooks (`trawl-webhooks`)',
      'api live feed and worker ended-jobs (live, nothing committed)',
    ],
  },
  pages: {
    producers: ['worker (PageFetched, PageFailed)', 'frontier (PageFailed `FETCH_LOST`)', 'webhooks (PageChanged)'],
    consumers: ['frontier (`trawl-frontier`)', 'projector-pg', 'projector-ch', 'webhooks (`trawl-webhooks`)', 'api live feed (live)'],
  },
  items: { producers: ['worker (ItemExtracted)'], consumers: ['projector-pg', 'projector-ch', 'webhooks (`trawl-webhooks`)'] },
  fetch: { producers: ['frontier (FetchRequested)'], consumers: ['worker (`trawl-worker`)'] },
  fetchDlq: { producers: ['worker (fetches out of retries)'], consumers: ['projector-pg dead letters (`trawl-projection-dead-letters-v1`)'] },
  webhooks: { producers: ['none: the name the webhook deliveries\' retry tiers are made from'], consumers: ['none'] },
  webhooksDlq: { producers: ['webhooks (deliveries out of retries)'], consumers: ['none: re-delivered from the API'] },
  eventsDlq: {
    producers: ['every consumer (undecodable or unprocessable events)'],
    consumers: ['projector-pg dead letters (`trawl-projection-dead-letters-v1`)'],
  },
  sessions: { producers: ['worker (SessionUpdated: logins, cookies set, retirements)'], consumers: ['worker sessions (every worker reads it all, throw-away group, nothing committed)'] },
};

const WEBHOOK_RETRY: TopicFlow = { producers: ['webhooks (an event with undelivered rows, delayed)'], consumers: ['webhooks (`trawl-webhooks`), after the tier\'s delay'] };

const FETCH_RETRY: TopicFlow = { producers: ['worker (a failed fetch, delayed)'], consumers: ['worker (`trawl-worker`), after the tier\'s delay'] };

/** The flow of a catalogue topic (retry tiers share one), or undefined for a topic not listed here. */
export function topicFlow(name: string): TopicFlow | undefined {
  const key = (Object.keys(TOPICS) as (keyof typeof TOPICS)[]).find((k) => TOPICS[k] === name);
  if (key) return FLOWS[key];
  if (name.startsWith(retryTopicName(TOPICS.webhooks, 0).slice(0, -1))) return WEBHOOK_RETRY;
  return name.startsWith(retryTopicName(TOPICS.fetch, 0).slice(0, -1)) ? FETCH_RETRY : undefined;
}
