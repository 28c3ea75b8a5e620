export {
  ENDPOINT_DEFAULTS,
  appDir,
  endpoints,
  parseEnvFile,
  repoRoot,
  stackEnvFile,
  trawlHome,
  type EndpointVariable,
  type Endpoints,
} from './config/endpoints.ts';
export { redactText, redactUrl } from './config/redact.ts';
export { authHeaders, httpTarget } from './config/http-credentials.ts';
export { TrawlError, isRetriable } from './errors.ts';
export { createLogger, type Logger } from './logger.ts';
export { eventId, randomEventId, stableId, uuidv5 } from './ids/event-id.ts';
export { MetricsRegistry, counterIn, defaultMetrics, eventLoopSampleMs, histogramIn, liveGaugeIn, DURATION_BUCKETS, type Sample } from './metrics/prometheus.ts';
export { headerString } from './tracing/message-headers.ts';
export {
  contextFromHeaders,
  eventAttributes,
  flushTraces,
  inRecordTrace,
  inSendSpan,
  inSpan,
  injectTraceHeaders,
  startBatchSpan,
  startProcessSpan,
  startTracing,
  traceIdOf,
  trawlTracer,
} from './tracing/trace-context.ts';
