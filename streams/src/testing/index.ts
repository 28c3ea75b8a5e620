/** Helpers for integration tests against the real local stack (`@trawl/streams/testing`). */
export * from './test-topics.ts';
export * from './wait-for.ts';
export * from './stack-check.ts';
export * from './database.ts';
export * from './tcp-proxy.ts';
export * from './test-clients.ts';
export * from './registry-subjects.ts';
export * from './synthetic-crawl.ts';
export * from './at-least-once-log.ts';
export * from './replay-bench-events.ts';
export * from './poison-messages.ts';
export * from './events-since.ts';
export * from './http-proxy.ts';
