/** docs/architecture.md's topic map is the one generated from streams' catalogue and flows. */
import { describe, expect, it } from 'vitest';
import { committedTopicMap, renderTopicMap, topicsWithoutFlow } from '../src/topic-map.ts';

describe('topic map', () => {
  it('names who produces and consumes every catalogue topic', () => {
    expect(topicsWithoutFlow()).toEqual([]);
  });

  it('is committed as generated (run `npm run docs -w @trawl/checks` after changing the catalogue)', () => {
    expect(committedTopicMap()).toBe(renderTopicMap());
  });
});
