import type { EventName } from '@trawl/schemas';
import { TOPICS } from '../topics/catalogue.ts';

/** Which topic each event lives on. */
export const EVENT_TOPIC: Readonly<Record<EventName, string>> = {
  TargetDue: TOPICS.schedule,
  CrawlRequested: TOPICS.jobs,
  JobDispatched: TOPICS.jobs,
  JobCompleted: TOPICS.jobs,
  JobFailed: TOPICS.jobs,
  JobCancelled: TOPICS.jobs,
  JobPaused: TOPICS.jobs,
  JobResumed: TOPICS.jobs,
  PageFetched: TOPICS.pages,
  PageFailed: TOPICS.pages,
  PageChanged: TOPICS.pages,
  ItemExtracted: TOPICS.items,
  FetchRequested: TOPICS.fetch,
  SessionUpdated: TOPICS.sessions,
};
