/** `npm run docs -w @trawl/checks`: regenerates the generated parts of the docs (the topic and package maps). */
import { writeBlock } from './generated-block.ts';
import { PACKAGE_MAP } from './package-map.ts';
import { TOPIC_MAP } from './topic-map.ts';

for (const block of [TOPIC_MAP, PACKAGE_MAP]) {
  process.stdout.write(writeBlock(block) ? `rewrote the ${block.name} in ${block.file}\n` : `the ${block.name} is up to date\n`);
}
