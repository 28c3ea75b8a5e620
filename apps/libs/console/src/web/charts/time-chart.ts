/**
 * A time-series chart on uPlot (canvas, ~50 KB, fast with thousands of points). One per panel;
 * `update()` swaps the data in place on auto-refresh, so the page does not flicker or rebuild.
 * Stacked charts (the status mix) are drawn as cumulative lines with the bands between them
 * filled, while the legend shows each series' own value.
 *
 * The figure carries its figures as data attributes (`data-sums`, `data-points`): the caption
 * shows them to people, and end-to-end tests compare them with ClickHouse.
 */
import uPlot from 'uplot';
import { h } from '../dom.ts';

export interface SeriesSpec {
  readonly label: string;
  readonly color: string;
  readonly values: readonly (number | null)[];
  /** What the caption reports instead of the sum of `values` (a rate's underlying count). */
  readonly total?: number;
}

export interface TimeChartOptions {
  readonly id: string;
  readonly title: string;
  /** Axis and legend values. */
  readonly format: (v: number) => string;
  readonly stacked?: boolean;
  readonly height?: number;
  /** What the caption says of a series: its sum (counts) or its maximum (times). */
  readonly summary?: 'sum' | 'max';
  /** Caption format, when it differs from the axis's (a count under a rate chart). */
  readonly captionFormat?: (v: number) => string;
  /** Called after each redraw (the page times "charts drawn" with it). */
  readonly onDraw?: () => void;
}

function sumOf(values: readonly (number | null)[]): number {
  let s = 0;
  for (const v of values) if (v !== null) s += v;
  return s;
}

function maxOf(values: readonly (number | null)[]): number | null {
  let m: number | null = null;
  for (const v of values) if (v !== null && (m === null || v > m)) m = v;
  return m;
}

/** A theme colour: canvas cannot read CSS variables, so they are resolved when a chart is built. */
function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** Colours with some transparency, for fills (#rrggbb in, #rrggbbaa out). */
function alpha(color: string, a: number): string {
  return `${color}${Math.round(a * 255).toString(16).padStart(2, '0')}`;
}

export class TimeChart {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;
  private readonly caption: HTMLElement;
  private readonly emptyNote: HTMLElement;
  private plot: uPlot | undefined;
  private labels = '';
  private raw: (readonly (number | null)[])[] = [];
  private step = 0;
  private readonly resize: ResizeObserver;

  constructor(private readonly options: TimeChartOptions) {
    this.body = h('div', { class: 'chart-body' });
    this.caption = h('figcaption', { class: 'chart-caption' });
    this.emptyNote = h('div', { class: 'chart-empty', hidden: true }, 'No data in this range');
    this.el = h('figure', { class: 'chart', id: `chart-${options.id}`, 'data-chart': options.id }, h('h3', {}, options.title), this.body, this.emptyNote, this.caption);
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(this.body);
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(240, this.body.clientWidth), height: this.options.height ?? 200 };
  }

  /** `step`: the bucket width, so the last bucket gets its full width instead of sitting on the edge. */
  update(t: readonly number[], series: readonly SeriesSpec[], step = 0): void {
    this.raw = series.map((s) => s.values);
    this.step = step;
    const labels = series.map((s) => s.label).join('|');
    const data = this.data(t, series);
    if (!this.plot || labels !== this.labels) {
      this.plot?.destroy();
      this.labels = labels;
      this.plot = new uPlot(this.plotOptions(series), data, this.body);
    } else {
      this.plot.setData(data);
    }
    const sums: Record<string, number | null> = {};
    for (const s of series) sums[s.label] = s.total ?? (this.options.summary === 'max' ? maxOf(s.values) : sumOf(s.values));
    const points = series.reduce((n, s) => n + s.values.filter((v) => v !== null && v !== 0).length, 0);
    this.el.dataset.sums = JSON.stringify(sums);
    this.el.dataset.points = String(points);
    this.emptyNote.hidden = points > 0;
    this.caption.textContent = series
      .map((s) => {
        const v = sums[s.label];
        return `${s.label}: ${v === null || v === undefined ? '–' : `${(this.options.captionFormat ?? this.options.format)(v)}${this.options.summary === 'max' ? ' max' : ''}`}`;
      })
      .join(' · ');
  }

  private data(t: readonly number[], series: readonly SeriesSpec[]): uPlot.AlignedData {
    if (!this.options.stacked) return [[...t], ...series.map((s) => [...s.values])] as uPlot.AlignedData;
    const acc = new Array<number>(t.length).fill(0);
    const stacked = series.map((s) => s.values.map((v, i) => (acc[i] = acc[i]! + (v ?? 0))));
    return [[...t], ...stacked] as uPlot.AlignedData;
  }

  /** Points on the buckets that hold something, while there are few: a lone value would be invisible as a line. */
  private pointsOf(seriesIdx: number): number[] {
    const values = this.raw[seriesIdx - 1] ?? [];
    const idx: number[] = [];
    values.forEach((v, i) => v !== null && v !== 0 && idx.push(i));
    return idx.length <= 40 ? idx : [];
  }

  private plotOptions(series: readonly SeriesSpec[]): uPlot.Options {
    const fmt = this.options.format;
    const raw = () => this.raw;
    const stacked = this.options.stacked ?? false;
    const muted = cssVar('--muted', '#667');
    const grid = cssVar('--grid', '#ddd');
    return {
      ...this.size(),
      cursor: { drag: { x: false, y: false } },
      legend: { show: true, live: true },
      scales: {
        x: { time: true, range: (_u, min, max) => [min, max + this.step] },
        y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1] },
      },
      axes: [
        { stroke: muted, space: 90, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } },
        { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, size: 64, values: (_u, vals) => vals.map((v) => fmt(v)) },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          fill: stacked ? alpha(s.color, 0.35) : series.length === 1 ? alpha(s.color, 0.12) : undefined,
          points: { show: true, size: 6, fill: s.color, filter: (_u: uPlot, si: number) => this.pointsOf(si) },
          spanGaps: false,
          // The legend shows the series' own value, not the stacked sum.
          value: (_u: uPlot, v: number | null, _si: number, di: number | null) =>
            di === null ? (v === null ? '–' : fmt(v)) : raw()[i]?.[di] === null || raw()[i]?.[di] === undefined ? '–' : fmt(raw()[i]![di]!),
        })),
      ],
      ...(stacked ? { bands: series.slice(1).map((_s, i) => ({ series: [i + 2, i + 1] as [number, number] })) } : {}),
      hooks: { draw: [() => this.options.onDraw?.()] },
    };
  }

  destroy(): void {
    this.resize.disconnect();
    this.plot?.destroy();
    this.plot = undefined;
  }
}
