import { describe, expect, it } from 'vitest';
import { serviceCatalogue, workerCount } from './catalogue.ts';

describe('service catalogue', () => {
  it('starts TRAWL_WORKERS workers (default 2) among the services, API after the pipeline', () => {
    expect(serviceCatalogue({}).map((s) => s.name)).toEqual([
      'projector-pg', 'projector-ch', 'webhooks', 'dispatcher', 'frontier', 'worker-1', 'worker-2', 'api', 'demo-site',
    ]);
    expect(serviceCatalogue({ TRAWL_WORKERS: '3' }).filter((s) => s.app === 'worker')).toHaveLength(3);
    expect(workerCount({ TRAWL_WORKERS: 'lots' })).toBe(2);
  });
});
