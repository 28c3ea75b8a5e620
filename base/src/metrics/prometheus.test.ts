import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { counterIn, gaugeIn, liveGaugeIn } from './prometheus.ts';

describe('prom-client helpers', () => {
  it('shares a metric between users of the same name, each under its labels', async () => {
    const r = new Registry();
    counterIn(r, 'c_total', 'c', ['consumer']).inc({ consumer: 'a' }, 2);
    counterIn(r, 'c_total', 'c', ['consumer']).inc({ consumer: 'b' });
    const text = await r.metrics();
    expect(text).toContain('c_total{consumer="a"} 2');
    expect(text).toContain('c_total{consumer="b"} 1');
  });

  it('refuses a name reused with another type or other labels', () => {
    const r = new Registry();
    counterIn(r, 'n_total', 'n', ['consumer']);
    expect(() => gaugeIn(r, 'n_total', 'n', ['consumer'])).toThrow(TypeError);
    expect(() => counterIn(r, 'n_total', 'n', ['topic'])).toThrow(TypeError);
  });

  it('reads live gauges from their collectors at scrape time, and drops a removed collector', async () => {
    const r = new Registry();
    let live = 1;
    const removeA = liveGaugeIn(r, 'g', 'g', ['consumer']).add(() => [[{ consumer: 'a' }, live]]);
    liveGaugeIn(r, 'g', 'g', ['consumer']).add(() => [[{ consumer: 'b' }, 7]]);
    live = 5;
    expect(await r.metrics()).toContain('g{consumer="a"} 5');
    removeA();
    const text = await r.metrics();
    expect(text).not.toContain('g{consumer="a"}');
    expect(text).toContain('g{consumer="b"} 7');
  });
});
