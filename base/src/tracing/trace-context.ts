/**
 * W3C trace context across Kafka, with OpenTelemetry: every produced event carries `traceparent`
 * (and `tracestate`) in its Kafka headers, taken from the span active where it is emitted — an API
 * request, a consumer's handling of the event that caused it — or a new root where there is none;
 * every consumer continues the trace of the event it handles, so a crawl reads as one trace from
 * POST /crawl to the projections' writes. Job and fetch ids travel as span attributes.
 *
 * The trace context is always propagated; spans are recorded only in a process that exports them,
 * to an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, with the
 * OTLP exporter's own OTEL_* settings; OTEL_TRACES_EXPORTER=none turns export off again). A process
 * that exports records every span, also under a parent a non-exporting process marked unsampled, so
 * the services that export show the whole trace of theirs.
 *
 * A process that does not export opens no span on its hot paths (a record handled, an event sent,
 * a projection's batch): the handling runs in a context that holds the record's trace headers as
 * they came, and what it emits carries them on unparsed — the same trace, the upstream span as its
 * parent. Only an event with no trace to continue gets a new root. Spans opened by hand (an API
 * request's) are non-recording there and carry the trace id on as well.
 *
 * Headers are taken in the shape Kafka clients hand them over (`MessageHeaders`), declared in
 * message-headers.ts rather than imported from a client: this module is @trawl/base's, which
 * loads no Kafka client.
 */
import { randomBytes } from 'node:crypto';
import {
  context,
  createContextKey,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler } from '@opentelemetry/sdk-trace-node';
import { headerString, type MessageHeaders } from './message-headers.ts';

export const TRACEPARENT_HEADER = 'traceparent';
const TRACESTATE_HEADER = 'tracestate';

/** The tracer every Trawl span comes from. */
export const trawlTracer = () => trace.getTracer('trawl');

let provider: NodeTracerProvider | undefined;
/** Whether this process records spans (it exports them); set by startTracing. */
let recording = false;

export function otlpExportConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Registers the process's tracer provider (once): the context manager that carries the active
 * span through awaits, the W3C propagator, and the OTLP exporter when configured. Returns whether
 * spans are exported. Without a provider, the API's no-op tracer would propagate a parent's
 * context but could not start a root.
 */
export function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): { exporting: boolean } {
  const exporting = otlpExportConfigured(env);
  if (provider) return { exporting: recording };
  recording = exporting;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || `trawl-${service}` }),
    spanProcessors: exporting ? [new BatchSpanProcessor(new OTLPTraceExporter())] : [],
    sampler: exporting ? new ParentBasedSampler({ root: new AlwaysOnSampler(), remoteParentNotSampled: new AlwaysOnSampler() }) : new AlwaysOffSampler(),
  });
  provider.register();
  return { exporting };
}

/** Sends the spans still buffered (a graceful stop). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

const headerGetter: TextMapGetter<MessageHeaders> = { keys: (carrier) => Object.keys(carrier), get: headerString };

/** The trace context a Kafka record's headers carry (the root context when they carry none). */
export function contextFromHeaders(headers: MessageHeaders | undefined): Context {
  return headers ? propagation.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/** A handled record's W3C trace context, as text: what a non-recording handling carries on. */
interface CarriedTrace {
  readonly traceparent: string;
  readonly tracestate: string | undefined;
}

/** Where a non-recording handling keeps the trace of the record it handles. */
const RECORD_TRACE = createContextKey('trawl record trace');
/**
 * The context of a record handled where nothing records: its trace. One small object a record —
 * the API's contexts copy a Map and make three closures each.
 */
class RecordContext implements Context {
  constructor(private readonly carried: CarriedTrace) {}
  getValue(key: symbol): unknown {
    return key === RECORD_TRACE ? this.carried : undefined;
  }
  setValue(key: symbol, value: unknown): Context {
    return ROOT_CONTEXT.setValue(RECORD_TRACE, this.carried).setValue(key, value);
  }
  deleteValue(key: symbol): Context {
    return key === RECORD_TRACE ? ROOT_CONTEXT : this;
  }
}

/** What a non-recording process's hot paths hand their callbacks in place of a span. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
/** W3C trace-context: version (not ff), trace id and parent id (not all zeros), flags; version 00 ends there. */
const VALID_TRACEPARENT = /^(?!ff)[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}(-.*)?$/;

/**
 * The trace a record's headers carry, copied out as text: the header values are slices of the
 * fetched batch, and a context lives as long as whatever the handling starts (a keep-alive socket,
 * a timer) — holding a slice would hold the whole batch. Undefined for none or a malformed one.
 */
function carriedTrace(headers: MessageHeaders | undefined): CarriedTrace | undefined {
  if (!headers) return undefined;
  const traceparent = headerString(headers, TRACEPARENT_HEADER);
  if (traceparent === undefined || !VALID_TRACEPARENT.test(traceparent) || (traceparent.startsWith('00-') && traceparent.length !== 55)) return undefined;
  return { traceparent, tracestate: headerString(headers, TRACESTATE_HEADER) };
}

/**
 * Writes `ctx`'s trace context into `headers` as W3C `traceparent` / `tracestate`: the trace of the
 * record being handled, where a non-recording handling put it there, else the active span's. Once
 * tracing is started, an event with neither starts a trace of its own.
 */
export function injectTraceHeaders(ctx: Context, headers: MessageHeaders): MessageHeaders {
  const carried = ctx.getValue(RECORD_TRACE) as CarriedTrace | undefined;
  if (carried) {
    headers[TRACEPARENT_HEADER] = carried.traceparent;
    if (carried.tracestate !== undefined) headers[TRACESTATE_HEADER] = carried.tracestate;
    return headers;
  }
  propagation.inject(ctx, headers);
  if (headers[TRACEPARENT_HEADER] === undefined && provider) headers[TRACEPARENT_HEADER] = newRootTraceparent();
  return headers;
}

/** A root's traceparent, unsampled: a new trace id and span id. */
function newRootTraceparent(): string {
  const id = randomBytes(24).toString('hex');
  return `00-${id.slice(0, 32)}-${id.slice(32)}-00`;
}

/**
 * Runs `fn` as the handling of a record whose trace headers are `headers`. A process that records
 * spans runs it in the span `start` opens (a child of the record's trace), ended with `fn`'s
 * outcome; one that does not opens nothing and runs `fn` in a context holding the record's trace,
 * which what it emits carries on (injectTraceHeaders). `fn` gets the span to add attributes to (a
 * no-op one where nothing records).
 */
export function inRecordTrace<T>(headers: MessageHeaders | undefined, start: () => { span: Span; parent: Context }, fn: (span: Span) => Promise<T>): Promise<T> {
  if (!recording) {
    const carried = carriedTrace(headers);
    return context.with(carried ? new RecordContext(carried) : ROOT_CONTEXT, fn, undefined, NO_SPAN);
  }
  const { span, parent } = start();
  return inSpan(span, parent, () => fn(span));
}

/**
 * The producer's span of one event (see startSendSpan), or none where nothing records: `fn` gets
 * the context to take the event's trace headers from.
 */
export function inSendSpan<T>(event: string, topic: string, value: unknown, fn: (ctx: Context, span: Span) => Promise<T>): Promise<T> {
  if (!recording) return fn(context.active(), NO_SPAN);
  const span = startSendSpan(event, topic, value);
  return inSpan(span, context.active(), () => fn(context.active(), span));
}

/** The trace id a `traceparent` value names, or undefined. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '')?.[1];
}

/** Span attributes of an event: its job and fetch ids, where it has them. */
export function eventAttributes(value: unknown): Attributes {
  const v = (value ?? {}) as { job_id?: unknown; fetch_id?: unknown; event_id?: unknown };
  const out: Attributes = {};
  if (typeof v.job_id === 'string') out['trawl.job_id'] = v.job_id;
  if (typeof v.fetch_id === 'string') out['trawl.fetch_id'] = v.fetch_id;
  if (typeof v.event_id === 'string') out['messaging.message.id'] = v.event_id;
  return out;
}

/** The producer's span of one event, a child of the active span (or a new root). */
function startSendSpan(event: string, topic: string, value: unknown): Span {
  return trawlTracer().startSpan(`send ${event}`, {
    kind: SpanKind.PRODUCER,
    attributes: { 'messaging.system': 'kafka', 'messaging.operation.type': 'send', 'messaging.destination.name': topic, 'trawl.event': event, ...eventAttributes(value) },
  });
}

function endSpan(span: Span, err?: unknown): void {
  if (err !== undefined) {
    span.recordException(err instanceof Error ? err : new Error(String(err)));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** Runs `fn` in a span (active for what it emits), ended with `fn`'s outcome. */
export async function inSpan<T>(span: Span, parent: Context, fn: () => Promise<T>): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), fn);
    endSpan(span);
    return result;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}

/** A consumer's span of one message, continuing the trace its headers carry. */
export function startProcessSpan(consumer: string, topic: string, partition: number, offset: string, event: string, value: unknown, parent: Context): Span {
  return trawlTracer().startSpan(
    `process ${event}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.destination.partition.id': String(partition),
        'messaging.kafka.offset': Number(offset),
        'messaging.consumer.group.name': consumer,
        'trawl.event': event,
        ...eventAttributes(value),
      },
    },
    parent,
  );
}

const MAX_LINKS = 32;

/**
 * A projection batch's span: the child of its first event's trace (so one job's events, which
 * share a partition, stay in their trace), linked to the other traces in the batch.
 */
export function startBatchSpan(projection: string, topic: string, partition: number, headers: readonly (MessageHeaders | undefined)[], firstValue: unknown): { span: Span; parent: Context } {
  const contexts = headers.map(contextFromHeaders);
  const parent = contexts[0] ?? ROOT_CONTEXT;
  const parentTrace = trace.getSpanContext(parent)?.traceId;
  const links: Link[] = [];
  const seen = new Set<string>(parentTrace ? [parentTrace] : []);
  for (const c of contexts) {
    const sc = trace.getSpanContext(c);
    if (!sc || seen.has(sc.traceId) || links.length >= MAX_LINKS) continue;
    seen.add(sc.traceId);
    links.push({ context: sc });
  }
  const span = trawlTracer().startSpan(
    `project ${topic}`,
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.destination.partition.id': String(partition),
        'messaging.batch.message_count': headers.length,
        'trawl.projection': projection,
        ...eventAttributes(firstValue),
      },
    },
    parent,
  );
  return { span, parent };
}
