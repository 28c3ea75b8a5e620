import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { contextFromHeaders, injectTraceHeaders, startTracing, traceIdOf, trawlTracer } from './trace-context.ts';

describe('trace context without an exporter', () => {
  it('records no span, and still carries one trace id from event to event', () => {
    expect(startTracing('trace-test', {}).exporting).toBe(false);
    const root = trawlTracer().startSpan('POST /crawl');
    expect(root.isRecording()).toBe(false);
    const first = injectTraceHeaders(trace.setSpan(context.active(), root), {});
    // The consumer of that event continues its trace; what it emits carries the same trace id.
    const parent = contextFromHeaders(first);
    const child = trawlTracer().startSpan('process FetchRequested', {}, parent);
    expect(child.isRecording()).toBe(false);
    const next = injectTraceHeaders(trace.setSpan(parent, child), {});
    const traceId = traceIdOf(String(first.traceparent));
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(String(next.traceparent))).toBe(traceId);
    expect(String(next.traceparent)).not.toBe(String(first.traceparent));
  });
});
