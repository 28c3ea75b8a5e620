import { describe, expect, it } from 'vitest';
import { eventId, stableId, uuidv5 } from './event-id.ts';

// Ids already on the Kafka logs and in read models: a service that re-emits a decision must give it
// the id it had, or consumers keep both. These values were produced before any refactoring and must
// never change.
const JOB = '6f1c2a4e-8b3d-4f5a-9c7e-1d2b3a4c5e6f';

describe('event ids (golden)', () => {
  it('are the ids already on the logs', () => {
    expect(eventId('CrawlRequested', JOB)).toBe('639212cd-3917-5cc3-9301-5d2acc19d017');
    expect(eventId('JobDispatched', JOB)).toBe('21dff092-01ae-5a89-a258-6b5efa36fec8');
    expect(eventId('PageChanged', JOB, 'f-1')).toBe('dcebda2e-3c36-5a4e-a0a2-8850636aafaf');
    expect(stableId('fetch', JOB, 3)).toBe('b89a79ed-6ff8-52c3-8fb0-3648022e44bc');
    expect(stableId(JOB, 'JobPaused', 2, 'again')).toBe('7a652af8-3e72-544e-818b-8761259d8102');
    expect(uuidv5('job:s1:2026-01-01T00:00:00.000Z')).toBe('ff312f7f-650f-5a80-941a-77f52c838ccb');
  });

  it('of an event are the stable ids of its kind and parts', () => {
    expect(eventId('PageChanged', JOB, 'f-1')).toBe(stableId('PageChanged', JOB, 'f-1'));
  });
});
