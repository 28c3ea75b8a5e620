import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics-registry.ts';

describe('MetricsRegistry', () => {
  it('renders counters and gauges in the Prometheus text format', () => {
    const m = new MetricsRegistry();
    m.counter('trawl_test_total', 'Things counted').inc({ consumer: 'worker', outcome: 'processed' }, 3);
    m.gauge('trawl_test_lag', 'Lag').set({ topic: 't', partition: 0 }, 7);
    expect(m.renderPrometheus()).toBe(
      [
        '# HELP trawl_test_lag Lag',
        '# TYPE trawl_test_lag gauge',
        'trawl_test_lag{topic="t",partition="0"} 7',
        '# HELP trawl_test_total Things counted',
        '# TYPE trawl_test_total counter',
        'trawl_test_total{consumer="worker",outcome="processed"} 3',
        '',
      ].join('\n'),
    );
  });

  it('escapes label values', () => {
    const m = new MetricsRegistry();
    m.counter('x_total', 'x').inc({ msg: 'a "b"\\\nc' });
    expect(m.renderPrometheus()).toContain('x_total{msg="a \\"b\\"\\\\\\nc"} 1');
  });

  it('shares a metric between users of the same name and reads collectors at render time', () => {
    const m = new MetricsRegistry();
    expect(m.counter('c_total', 'c')).toBe(m.counter('c_total', 'c'));
    let live = 1;
    const remove = m.gauge('g', 'g').collect(() => [[{ consumer: 'a' }, live]]);
    live = 5;
    expect(m.renderPrometheus()).toContain('g{consumer="a"} 5');
    remove();
    expect(m.renderPrometheus()).not.toContain('g{consumer="a"}');
  });

  it('refuses a name reused with another type, and counters going down', () => {
    const m = new MetricsRegistry();
    m.counter('n_total', 'n');
    expect(() => m.gauge('n_total', 'n')).toThrow(TypeError);
    expect(() => m.counter('n_total', 'n').inc({}, -1)).toThrow(RangeError);
  });

  it('sums a counter over label sets', () => {
    const m = new MetricsRegistry();
    const c = m.counter('s_total', 's');
    c.inc({ consumer: 'a', topic: 'x' }, 2);
    c.inc({ consumer: 'a', topic: 'y' }, 3);
    c.inc({ consumer: 'b', topic: 'x' }, 4);
    expect(c.sum({ consumer: 'a' })).toBe(5);
    expect(c.get({ consumer: 'b', topic: 'x' })).toBe(4);
  });
});
