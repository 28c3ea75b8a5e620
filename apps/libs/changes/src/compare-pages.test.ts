import { describe, expect, it } from 'vitest';
import { comparePage, comparePages, type RunPage } from './compare-pages.ts';

const page = (url: string, hash: string | null, ok = true, run = 'b'): RunPage => ({ fetch_id: `${run}:${url}`, url, ok, content_hash: hash });

describe('comparePages', () => {
  it('given two runs, names each URL new, gone, changed or unchanged by its content hash, in URL order', () => {
    const before = [page('https://s.example/a', 'h1'), page('https://s.example/b', 'h2'), page('https://s.example/c', 'h3')];
    const now = [page('https://s.example/d', 'h4', true, 'n'), page('https://s.example/b', 'h2', true, 'n'), page('https://s.example/a', 'h1x', true, 'n')];
    expect(comparePages(before, now)).toEqual([
      { kind: 'changed', url: 'https://s.example/a', fetch_id: 'n:https://s.example/a', content_hash: 'h1x', previous_fetch_id: 'b:https://s.example/a', previous_content_hash: 'h1' },
      { kind: 'unchanged', url: 'https://s.example/b', fetch_id: 'n:https://s.example/b', content_hash: 'h2', previous_fetch_id: 'b:https://s.example/b', previous_content_hash: 'h2' },
      { kind: 'gone', url: 'https://s.example/c', fetch_id: null, content_hash: null, previous_fetch_id: 'b:https://s.example/c', previous_content_hash: 'h3' },
      { kind: 'new', url: 'https://s.example/d', fetch_id: 'n:https://s.example/d', content_hash: 'h4', previous_fetch_id: null, previous_content_hash: null },
    ]);
  });

  it('counts a page that failed as absent: failing now is gone, failing before and fetched now is new, failing in both is not listed', () => {
    const before = [page('https://s.example/x', 'h', true), page('https://s.example/y', null, false), page('https://s.example/z', null, false)];
    const now = [page('https://s.example/x', null, false), page('https://s.example/y', 'h', true), page('https://s.example/z', null, false)];
    expect(comparePages(before, now).map((c) => [c.url, c.kind])).toEqual([
      ['https://s.example/x', 'gone'],
      ['https://s.example/y', 'new'],
    ]);
  });

  it('says unknown, not unchanged, when a run kept no content hash for a page in both runs', () => {
    expect(comparePage(page('u', null), page('u', 'h'))).toBe('unknown');
    expect(comparePage(page('u', 'h'), page('u', null))).toBe('unknown');
    expect(comparePage(page('u', null), page('u', null))).toBe('unknown');
  });

  it('compares a page reused from the cache (same hash as the body it stands for) as unchanged', () => {
    expect(comparePage(page('u', 'h'), page('u', 'h', true, 'cache'))).toBe('unchanged');
  });

  it('gives the first run of a schedule (no previous pages) every fetched page as new', () => {
    expect(comparePages([], [page('a', 'h'), page('b', null)]).map((c) => c.kind)).toEqual(['new', 'new']);
  });

  it('is null for a page present in neither run', () => {
    expect(comparePage(undefined, page('u', null, false))).toBeNull();
    expect(comparePage(undefined, undefined)).toBeNull();
  });
});
