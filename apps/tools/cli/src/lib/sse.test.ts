import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.ts';

describe('SSE parser', () => {
  it('parses messages split across chunks, skips comments and tracks the last id', () => {
    const p = new SseParser();
    expect(p.push('retry: 2000\n\n: keep-alive\n\nid: 1\nevent: log\nda')).toEqual([]);
    expect(p.push('ta: {"a":1}\n\nid: 2\nevent: log\ndata: x\ndata: y\r\n\r\n')).toEqual([
      { id: '1', event: 'log', data: '{"a":1}' },
      { id: '2', event: 'log', data: 'x\ny' },
    ]);
    expect(p.lastEventId).toBe('2');
    expect(p.push('event: end\ndata: {}\n\n')).toEqual([{ id: '2', event: 'end', data: '{}' }]);
  });
});
