import { TOPICS } from '@trawl/streams';

/** The topics the projection reads; tests and benchmarks point it at their own. */
export interface ProjectedTopics {
  readonly jobs: string;
  readonly pages: string;
  readonly items: string;
}

export const DEFAULT_TOPICS: ProjectedTopics = { jobs: TOPICS.jobs, pages: TOPICS.pages, items: TOPICS.items };

export function topicList(t: ProjectedTopics): string[] {
  return [t.jobs, t.pages, t.items];
}
