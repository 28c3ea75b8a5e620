/** Helpers for integration tests against the real local stack (`@trawl/streams/testing`). */
export { committedOffsets, createTestTopics, testId, type TestTopicSpec, type TestTopics } from './test-topics.ts';
export { waitFor } from './wait-for.ts';
export { requireStack } from './stack-check.ts';
export { pairSockets, startTcpProxy, type TcpProxy } from './tcp-proxy.ts';
export { testKafka, testLogger } from './test-clients.ts';
export { deleteSubjects } from './registry-subjects.ts';
export { decoded, prng, syntheticCrawl, syntheticJob, type SyntheticEvent } from './synthetic-crawl.ts';
export { atLeastOnceLog, consumerOrder, placeInPartitions, type PlacedRecord } from './at-least-once-log.ts';
export { BENCH_EVENTS, BENCH_TOPICS, ensureBenchEvents } from './replay-bench-events.ts';
export { deadLettersFrom, poisonWorld, sendPoison, withUnknownSchemaId, type AppProcess } from './poison-messages.ts';
export { eventsSince } from './events-since.ts';
export { startHttpProxy, type HttpProxy } from './http-proxy.ts';
export { runAppAtStart, type StartOutcome } from './run-app-at-start.ts';
