import { context, createContextKey, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { contextFromHeaders, injectTraceHeaders, inRecordTrace, startTracing, traceIdOf, trawlTracer } from './trace-context.ts';

describe('trace context without an exporter', () => {
  expect(startTracing('trace-test', {}).exporting).toBe(false);
  const noSpan = () => {
    throw new Error('a process that records nothing opens no span');
  };

  it('records no span, and still carries one trace id from event to event', () => {
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

  it('hands on the trace headers of the record being handled as they came, opening no span', async () => {
    // As a fetched record's headers are: slices of the batch's buffer, which the context must not hold.
    const batch = Buffer.from('....00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01vendor=1....');
    const record = { traceparent: batch.subarray(4, 59), tracestate: batch.subarray(59, 67) };
    const emitted = await inRecordTrace(record, noSpan, async (span) => {
      expect(span.isRecording()).toBe(false);
      await new Promise((resolve) => setImmediate(resolve)); // still the record's context after an await
      batch.fill(0); // the batch's buffer reused: the context kept a copy
      // A value set on top (another library's) keeps the record's trace with it.
      const key = createContextKey('trace-test other');
      const layered = context.active().setValue(key, 1);
      expect(layered.getValue(key)).toBe(1);
      expect(injectTraceHeaders(layered, {}).traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      return injectTraceHeaders(context.active(), { 'trawl-event': 'PageFetched' });
    });
    expect(String(emitted.traceparent)).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(String(emitted.tracestate)).toBe('vendor=1');
    // Outside the handling, the record's trace is gone.
    expect(traceIdOf(String(injectTraceHeaders(context.active(), {}).traceparent))).not.toBe('0af7651916cd43dd8448eb211c80319c');
  });

  it('starts a trace of its own for an event with none to continue, or a malformed one', async () => {
    const outside = injectTraceHeaders(context.active(), {});
    const handled = (traceparent: string | undefined) => inRecordTrace(traceparent === undefined ? undefined : { traceparent }, noSpan, async () => injectTraceHeaders(context.active(), {}));
    const malformed = [
      'not-a-traceparent',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01', // trace id all zeros
      '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01', // upper case
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', // version ff
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra', // version 00 with more
    ];
    const roots = [outside, await handled(undefined), ...(await Promise.all(malformed.map(handled)))].map((h) => String(h.traceparent));
    for (const root of roots) expect(root).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(new Set(roots.map(traceIdOf)).size).toBe(roots.length);
    // A later version's longer traceparent is continued.
    const later = '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more';
    expect((await handled(later)).traceparent).toBe(later);
  });
});
