import { TOPICS } from '../topics/catalogue.ts';

/** The topics a read model projects (both projectors read the same three); tests and benchmarks point it at their own. */
export interface ProjectedTopics {
  readonly jobs: string;
  readonly pages: string;
  readonly items: string;
}

export const DEFAULT_PROJECTED_TOPICS: ProjectedTopics = { jobs: TOPICS.jobs, pages: TOPICS.pages, items: TOPICS.items };

/** In the order their events are best applied: a job's events before its pages, pages before items. */
export function projectedTopicList(t: ProjectedTopics): string[] {
  return [t.jobs, t.pages, t.items];
}

/** The name under which a projection's version stores its offsets and reports itself (`pg-v4`). */
export function versionedProjectionName(projection: string, version: number): string {
  return `${projection}-v${version}`;
}
