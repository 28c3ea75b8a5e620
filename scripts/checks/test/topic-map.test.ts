/** docs/architecture.md's topic and package maps are the ones generated from the code. */
import { describe, expect, it } from 'vitest';
import { committedBlock, renderBlock } from '../src/generated-block.ts';
import { PACKAGE_MAP, packagesWithoutDescription } from '../src/package-map.ts';
import { TOPIC_MAP, topicsWithoutFlow } from '../src/topic-map.ts';

describe('topic map', () => {
  it('names who produces and consumes every catalogue topic', () => {
    expect(topicsWithoutFlow()).toEqual([]);
  });

  it('is committed as generated (run `npm run docs -w @trawl/checks` after changing the catalogue)', () => {
    expect(committedBlock(TOPIC_MAP)).toBe(renderBlock(TOPIC_MAP));
  });
});

describe('package map', () => {
  it('has a description for every workspace package', () => {
    expect(packagesWithoutDescription()).toEqual([]);
  });

  it('is committed as generated (run `npm run docs -w @trawl/checks` after adding, moving or re-describing a package)', () => {
    expect(committedBlock(PACKAGE_MAP)).toBe(renderBlock(PACKAGE_MAP));
  });
});
