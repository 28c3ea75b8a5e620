// What every service needs and loads no Kafka client lives in @trawl/base; these names are handed
// on from there so that imports of @trawl/streams written before the split keep working. New code
// (and every library that talks to no Kafka) imports them from @trawl/base.
export {
  DURATION_BUCKETS,
  ENDPOINT_DEFAULTS,
  MetricsRegistry,
  TrawlError,
  appDir,
  authHeaders,
  contextFromHeaders,
  counterIn,
  createLogger,
  defaultMetrics,
  endpoints,
  eventAttributes,
  eventId,
  eventLoopSampleMs,
  histogramIn,
  httpTarget,
  inSpan,
  injectTraceHeaders,
  isRetriable,
  liveGaugeIn,
  parseEnvFile,
  redactText,
  redactUrl,
  repoRoot,
  stableId,
  stackEnvFile,
  traceIdOf,
  trawlHome,
  trawlTracer,
  uuidv5,
  type EndpointVariable,
  type Endpoints,
  type Logger,
} from '@trawl/base';
export { LISTENER_PORT_DEFAULTS, stackListeners, type StackListener } from './config/stack-listeners.ts';
export {
  DeferredError,
  DeliveryConfigError,
  EventTooLargeError,
  InvalidOptionError,
  NonRetriableError,
  RetriableError,
  SchemaNotFoundError,
  SchemaRegistryError,
  StreamsError,
  UndecodableMessageError,
} from './errors.ts';
export { createKafka } from './kafka/client.ts';
export { kafkajsFastPaths } from './kafka/kafkajs.ts';
export {
  TOPICS,
  TOPIC_PREFIX,
  catalogueOptions,
  consumerGroup,
  replicationConfigs,
  replicationFor,
  topicCatalogue,
  type TopicReplication,
  type TopicSpec,
} from './topics/catalogue.ts';
export { provisionTopics, replicationOf, type ProvisionReport } from './topics/provision.ts';
export { createTopicsAndWait } from './topics/create-topics.ts';
export { EVENT_DELIVERY, checkDelivery, type DeliveryCheck, type DeliverySettings } from './producer/delivery.ts';
export { EventCodec, subjectFor, type DecodedEvent, type EventFields } from './registry/event-codec.ts';
export {
  DEFAULT_MAX_EVENT_BYTES,
  EventProducer,
  maxEventBytesFromEnv,
  type EmitOptions,
  type RouteOptions,
  type EncodedEvent,
  type EventBody,
  type RawMessage,
} from './producer/event-producer.ts';
export { startServiceProducer, type ServiceProducerOptions } from './producer/service-producer.ts';
export { endOffsets, readEvents, readTopics, type LoggedEvent, type LoggedMessage } from './reader/topic-reader.ts';
export { runService, type Service } from './service/run-service.ts';
export { operatorPortFromEnv, operatorPortVariable, startOperatorServer } from './service/operator-server.ts';
export {
  httpCheck,
  joinedCheck,
  kafkaCheck,
  postgresCheck,
  runChecks,
  type CheckResult,
  type ReadinessCheck,
  type ReadinessChecks,
} from './service/readiness.ts';
export { DEFAULT_READY_CACHE_MS, ReadinessCache, readyCacheMsFromEnv, type ReadinessCacheOptions } from './service/readiness-cache.ts';
export { CoPartitionedAssigner } from './kafka/co-partitioned-assigner.ts';
export { topicFlow } from './topics/topic-flows.ts';
export { Backoff, sleep } from './util/backoff.ts';
export { onceEvery } from './util/every.ts';
export { TRAWL_HEADERS, describeError, headerStrings, type MessageOrigin } from './retry/retry-headers.ts';
export { fetchRetryTiers, retryTiers, webhookRetryTiers, type RetryTier } from './retry/retry-tiers.ts';
export { deadLetterFor, type DeadLetter } from './retry/dead-letter.ts';
export type { ConsumedEvent, ConsumedEventOf } from './consumer/consumed-event.ts';
export { runEventConsumer, type EventConsumer } from './consumer/event-consumer.ts';
export { subscribeLive, type LiveEvent, type LiveSubscription } from './consumer/live-subscriber.ts';
export { subscribeTable, TableBehindError, type TableRecord, type TableSubscription, type TableSubscriptionOptions } from './consumer/table-view.ts';
export { WorkBudget } from './consumer/work-budget.ts';
export { DELIVERIES_TABLE } from './consumer/delivery-store.ts';
export { ensureOffsetsTable, readProjectionOffsets, resetProjectionOffsets } from './projection/offset-store.ts';
export {
  runProjection,
  runRawProjection,
  type ApplyEvents,
  type ProjectedEvent,
  type ProjectedMessage,
  type Projection,
  type ProjectionOptions,
} from './projection/run-projection.ts';
export { projectionFetchSettings } from './projection/projection-options.ts';
export type { PartitionStats } from './metrics/consumer-metrics.ts';
export { rangeKey, readRanges, type PartitionRange, type RangeEvent } from './reader/range-reader.ts';
export { ProgressTracker, stderrProgress, type ProgressSink, type ReplayPhase, type ReplayProgress } from './reader/replay-progress.ts';
export { offsetsAt, watermarks } from './reader/log-positions.ts';
export {
  replayAndSwap,
  replayIdOf,
  type Positions,
  type ReplayOffset,
  type ReplayOptions,
  type ReplayReport,
  type ReplayTarget,
  type ReplayVerified,
  type SwapContext,
} from './replay/replay-and-swap.ts';
export { DEFAULT_PROJECTED_TOPICS, projectedTopicList, versionedProjectionName, type ProjectedTopics } from './replay/projected-topics.ts';
export { REPLAY_FLAGS, replayFailureLine, replayOptionsFromFlags, runReplayCommand, type ReplayFlags } from './replay/replay-command.ts';
