import { describe, expect, it } from 'vitest';
import { demoPort, localFetchAllow, serviceEnv } from './up.ts';

describe('the environment `trawl up` gives services', () => {
  it('opens the demo site’s port on this machine and no other', () => {
    expect(serviceEnv({}).TRAWL_FETCH_ALLOW).toBe('127.0.0.1:8090,[::1]:8090,localhost:8090');
    expect(serviceEnv({ TRAWL_DEMO_PORT: '18090' }).TRAWL_FETCH_ALLOW).toBe('127.0.0.1:18090,[::1]:18090,localhost:18090');
    expect(localFetchAllow({})).not.toMatch(/\/\d+|,localhost(,|$)/);
  });

  it('keeps an explicit TRAWL_FETCH_ALLOW, even an empty one, and the rest of the environment', () => {
    expect(serviceEnv({ TRAWL_FETCH_ALLOW: '10.0.0.0/8:443' }).TRAWL_FETCH_ALLOW).toBe('10.0.0.0/8:443');
    expect(serviceEnv({ TRAWL_FETCH_ALLOW: '' }).TRAWL_FETCH_ALLOW).toBe('');
    expect(serviceEnv({ TRAWL_LOG_LEVEL: 'debug' }).TRAWL_LOG_LEVEL).toBe('debug');
  });

  it('refuses a demo port that is not a TCP port', () => {
    expect(demoPort({})).toBe(8090);
    expect(() => demoPort({ TRAWL_DEMO_PORT: '80901' })).toThrow('TRAWL_DEMO_PORT must be a TCP port (1-65535), got "80901"');
  });
});
