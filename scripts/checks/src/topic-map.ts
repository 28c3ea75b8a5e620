/**
 * The topic map of docs/architecture.md, generated from streams' topic catalogue (names, roles,
 * partitions, keys, retention) and its topic flows (who produces, who consumes), so it cannot
 * drift from the code: a test compares the committed map with this.
 */
import { join } from 'node:path';
import { catalogueOptions, TOPIC_PREFIX, topicCatalogue, topicFlow, type TopicSpec } from '@trawl/streams';
import type { GeneratedBlock } from './generated-block.ts';
import { REPO_ROOT } from './import-layers.js';

export const ARCHITECTURE_DOC = join(REPO_ROOT, 'docs', 'architecture.md');

const DAY_MS = 24 * 60 * 60 * 1000;

function retention(spec: TopicSpec): string {
  const ms = Number(spec.configs['retention.ms']);
  return ms < 0 ? 'forever' : `${ms / DAY_MS} days`;
}

/** Catalogue topics with no entry in streams' topic flows. */
export function topicsWithoutFlow(): string[] {
  return topicCatalogue(catalogueOptions({})).filter((spec) => !topicFlow(spec.name)).map((spec) => spec.name);
}

export const TOPIC_MAP: GeneratedBlock = {
  file: ARCHITECTURE_DOC,
  name: 'topic-map',
  render() {
    const rows = topicCatalogue(catalogueOptions({})).map((spec) => {
      const flow = topicFlow(spec.name);
      const name = spec.name.slice(TOPIC_PREFIX.length);
      return `| \`${name}\` | ${spec.role} | ${spec.partitions} | ${spec.key} | ${retention(spec)} | ${flow?.producers.join('; ') ?? '?'} | ${flow?.consumers.join('; ') ?? '?'} |`;
    });
    return ['| topic | role | partitions | key | kept | produced by | consumed by (group) |', '|---|---|---|---|---|---|---|', ...rows].join('\n');
  },
};
