import { describe, expect, it } from 'vitest';
import { PageWaiters } from './page-waiters.ts';

const fetched = (jobId: string) => ({ name: 'PageFetched' as const, value: { job_id: jobId, url: 'https://a.example/' } as never });

describe('PageWaiters', () => {
  it('resolves every waiter of a job with its first page outcome, and forgets them', async () => {
    const waiters = new PageWaiters();
    const a = waiters.wait('j1');
    const b = waiters.wait('j1');
    waiters.handle(fetched('j2'));
    expect(waiters.size).toBe(1);
    waiters.handle(fetched('j1'));
    await expect(a.outcome).resolves.toMatchObject({ kind: 'fetched', page: { url: 'https://a.example/' } });
    await expect(b.outcome).resolves.toMatchObject({ kind: 'fetched' });
    expect(waiters.size).toBe(0);
  });

  it('resolves on the end of a job that produced no page', async () => {
    const waiters = new PageWaiters();
    const w = waiters.wait('j1');
    waiters.handle({ name: 'JobCompleted', value: { job_id: 'j1', outcome: 'finished' } as never });
    await expect(w.outcome).resolves.toMatchObject({ kind: 'ended', event: 'JobCompleted' });
  });

  it('ignores events of other kinds and frees a cancelled waiter', () => {
    const waiters = new PageWaiters();
    const w = waiters.wait('j1');
    waiters.handle({ name: 'JobDispatched', value: { job_id: 'j1' } as never });
    expect(waiters.size).toBe(1);
    w.cancel();
    expect(waiters.size).toBe(0);
  });
});

describe('PageWaiters and the order of topics', () => {
  it('waits for the page of a job that ended having counted it (trawl.jobs may come first)', async () => {
    const waiters = new PageWaiters();
    const w = waiters.wait('j1');
    waiters.handle({ name: 'JobCompleted', value: { job_id: 'j1', outcome: 'finished', pages_fetched: 1, pages_failed: 0 } as never });
    expect(waiters.size).toBe(1);
    waiters.handle(fetched('j1'));
    await expect(w.outcome).resolves.toMatchObject({ kind: 'fetched' });
  });
});
