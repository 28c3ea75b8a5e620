import { describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { factRow, hostOf, type PositionedEvent } from './fact-rows.ts';
import { tsvBatch, UserMemory } from './tsv-batch.ts';

const at = (name: PositionedEvent['name'], value: PositionedEvent['value'], offset = 7n): PositionedEvent => ({ topic: 't', partition: 2, offset, name, value });

describe('fact rows', () => {
  it('finds the host of a URL without port, credentials or case', () => {
    expect(hostOf('https://Shop.Example:8443/p?q=1')).toBe('shop.example');
    expect(hostOf('http://user:pw@a.example/')).toBe('a.example');
    expect(hostOf('http://[::1]:8080/x')).toBe('[::1]');
    expect(hostOf('not a url')).toBe('');
  });

  it('writes a fetched page as one escaped TabSeparated line with its position', () => {
    const row = factRow(at('PageFetched', { ...samples.PageFetched, url: 'https://a.example/x\ty\\z', occurred_at: new Date('2026-01-01T00:00:01.900Z') }), () => 'alice')!;
    expect(row.table).toBe('page_fetches');
    const fields = row.line.replace(/\n$/, '').split('\t');
    expect(fields).toHaveLength(18);
    expect(fields.slice(3, 6)).toEqual(['alice', 'a.example', 'https://a.example/x\\ty\\\\z']);
    expect(fields.slice(11, 12)).toEqual(['1']);
    expect(fields.slice(-3)).toEqual([String(Date.UTC(2026, 0, 1) / 1000 + 1), '2', '7']);
  });

  it('writes a failed page with status 0 when there was no answer, and its error code', () => {
    const fields = factRow(at('PageFailed', { ...samples.PageFailed, status: null, error_code: 'TIMEOUT', attempts: 4 }), () => undefined)!.line.split('\t');
    expect([fields[3], fields[6], fields[11], fields[12], fields[13]]).toEqual(['', '0', '0', 'TIMEOUT', '4']);
  });

  it('writes pauses and resumes as job events, with their user', () => {
    for (const name of ['JobPaused', 'JobResumed'] as const) {
      const row = factRow(at(name, { ...samples[name], user_id: 'carol', occurred_at: new Date('2026-01-01T00:00:02Z') }), () => undefined)!;
      expect(row.table).toBe('job_events');
      expect(row.line.replace(/\n$/, '').split('\t')).toEqual([samples[name].event_id, samples[name].job_id, name, 'carol', '', '', '0', '0', '0', String(Date.UTC(2026, 0, 1) / 1000 + 2), '2', '7']);
    }
  });

  it('keeps no row for events the analytics do not use', () => {
    expect(factRow(at('FetchRequested', samples.FetchRequested), () => undefined)).toBeUndefined();
  });

  it('tags the pages of a batch with the user its job events name', () => {
    const users = new UserMemory(2);
    const events = [at('PageFetched', samples.PageFetched, 1n), at('CrawlRequested', { ...samples.CrawlRequested, user_id: 'bob' }, 2n)];
    users.learn(events);
    const batch = tsvBatch(events, users);
    expect(batch.rows).toEqual({ job_events: 1, page_fetches: 1, items: 0 });
    expect(batch.bodies.page_fetches.split('\t')[3]).toBe('bob');
  });

  it('forgets the oldest users beyond its bound', () => {
    const users = new UserMemory(2);
    users.remember('j1', 'a');
    users.remember('j2', 'b');
    users.remember('j3', 'c');
    expect([users.get('j1'), users.get('j2'), users.get('j3')]).toEqual([undefined, 'b', 'c']);
  });
});
