import { describe, expect, it } from 'vitest';
import { jobEventId } from './event-ids.ts';

// Ids already on the Kafka logs: a frontier or worker that re-emits an event after a crash must give
// it the id it had, or consumers keep both. These values were produced before any refactoring and
// must never change.
const JOB = '6f1c2a4e-8b3d-4f5a-9c7e-1d2b3a4c5e6f';

describe('crawl event ids (golden)', () => {
  it('are the ids already on the logs', () => {
    expect(jobEventId({ jobId: JOB, kind: 'FetchRequested', key: 'f-1' })).toBe('e0622456-ed90-5770-b7b4-98824e4ea989');
    expect(jobEventId({ jobId: JOB, kind: 'JobCompleted' })).toBe('357d3b6c-b69e-580c-8c27-070e34d583a5');
    expect(jobEventId({ jobId: JOB, kind: 'PageFetched', key: 'a1b2' })).toBe('352395f5-0319-5dd0-98e6-c34a097e10a4');
    expect(jobEventId({ jobId: JOB, kind: 'FetchLost', key: 'f-2' })).toBe('fa67aafd-4ca8-5ecc-b58d-f394c5edb702');
  });
});
