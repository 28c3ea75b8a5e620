/** `npm run docs -w @trawl/checks`: regenerates the generated parts of the docs (the topic map). */
import { ARCHITECTURE_DOC, writeTopicMap } from './topic-map.ts';

process.stdout.write(writeTopicMap() ? `rewrote the topic map in ${ARCHITECTURE_DOC}\n` : 'the topic map is up to date\n');
