/**
 * The scrape-metrics dashboard: the caller's crawls in ClickHouse over a time range, by host and
 * job, refreshed on a timer. One request (`GET /metrics/scrape`) brings every series and
 * breakdown; consumer lag comes separately from Kafka, so a slow broker never holds the charts.
 *
 * Rates: a bucket's count × 60 / step is "per minute" whatever the bucket width, so lines keep
 * their meaning when the range (and with it the step) changes. Captions give the exact counts.
 */
import { client, given, ok } from '../api.ts';
import { barList } from '../charts/bar-list.ts';
import { TimeChart } from '../charts/time-chart.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import { replaceQuery, type Cleanup } from '../router.ts';
import type { LagReport, ScrapeMetrics } from '@trawl/client';
import { errorText, notice, pageHeader } from '../ui.ts';

const RANGES: readonly [string, string, number][] = [
  ['15m', 'last 15 minutes', 900],
  ['1h', 'last hour', 3600],
  ['6h', 'last 6 hours', 21_600],
  ['24h', 'last 24 hours', 86_400],
  ['7d', 'last 7 days', 7 * 86_400],
  ['30d', 'last 30 days', 30 * 86_400],
];
const REFRESH: readonly [string, string][] = [
  ['0', 'off'],
  ['10', 'every 10 s'],
  ['30', 'every 30 s'],
  ['60', 'every minute'],
];
const CHART_PANELS = 'throughput,items,fetch_time,status_mix';
const TABLE_PANELS = 'totals,top_hosts,errors_by_kind,errors_by_host,status_codes,hosts';
const COLORS = { pages: '#2a7de1', items: '#17a673', failed: '#d9453d', retries: '#e8a317', bytes: '#7a5cd6', p50: '#17a673', p95: '#e8a317', p99: '#d9453d' };
const STATUS_COLORS: Record<string, string> = { '2xx': '#17a673', '3xx': '#2a7de1', '4xx': '#e8a317', '5xx': '#d9453d', none: '#8a8f98' };

declare global {
  interface Window {
    /** Timings of the dashboard, for people (devtools) and the end-to-end test. */
    __trawlMetrics?: { chartsDrawnMs?: number; viewToChartsMs?: number; refreshes: number; lastRequestMs?: number };
  }
}

export function metricsView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Cleanup {
  const viewStart = performance.now();
  const timings = (window.__trawlMetrics = { refreshes: 0 } as NonNullable<Window['__trawlMetrics']>);
  let range = RANGES.find((r) => r[0] === query.get('range'))?.[0] ?? '1h';
  let host = query.get('host') ?? '';
  let jobId = query.get('job') ?? '';
  let refreshSeconds = REFRESH.find((r) => r[0] === query.get('refresh'))?.[0] ?? '30';
  let timer: number | undefined;
  let inFlight = false;
  let firstDraw = true;

  const pending = new Set<string>();
  const drawn = (id: string) => () => {
    pending.delete(id);
    if (firstDraw && pending.size === 0 && timings.refreshes > 0) {
      firstDraw = false;
      timings.chartsDrawnMs = Math.round(performance.now());
      timings.viewToChartsMs = Math.round(performance.now() - viewStart);
      document.body.dataset.chartsDrawn = String(timings.chartsDrawnMs);
      performance.mark('trawl:charts-drawn');
    }
  };
  const charts = {
    throughput: new TimeChart({ id: 'throughput', title: 'Pages and items per minute', format: f.short, captionFormat: f.count, onDraw: drawn('throughput') }),
    fetchTime: new TimeChart({ id: 'fetch-time', title: 'Fetch time p50 / p95 / p99', format: f.ms, summary: 'max', onDraw: drawn('fetch-time') }),
    status: new TimeChart({ id: 'status-mix', title: 'Status-code mix (pages per minute)', format: f.short, captionFormat: f.count, stacked: true, onDraw: drawn('status-mix') }),
    bytes: new TimeChart({ id: 'bytes', title: 'Bytes per minute', format: f.bytes, onDraw: drawn('bytes') }),
    failures: new TimeChart({ id: 'retries-dlq', title: 'Retries and dead letters per minute', format: f.short, captionFormat: f.count, onDraw: drawn('retries-dlq') }),
  };

  const rangeSelect = h('select', { id: 'metrics-range', 'aria-label': 'Time range' }, ...RANGES.map(([v, label]) => h('option', { value: v, selected: v === range }, label)));
  const hostSelect = h('select', { id: 'metrics-host', 'aria-label': 'Host' }, h('option', { value: '' }, 'all hosts'));
  const jobInput = h('input', { id: 'metrics-job', type: 'text', placeholder: 'job id (all jobs)', value: jobId, size: 38, spellcheck: 'false', 'aria-label': 'Job id' });
  const refreshSelect = h('select', { id: 'metrics-refresh', 'aria-label': 'Auto-refresh' }, ...REFRESH.map(([v, label]) => h('option', { value: v, selected: v === refreshSeconds }, label)));
  const refreshButton = h('button', { type: 'button', class: 'button ghost', id: 'metrics-reload' }, 'Refresh');
  const status = h('span', { class: 'hint', id: 'metrics-status' });
  const message = h('div', { id: 'metrics-message' });
  const kpis = h('div', { class: 'kpis', id: 'metrics-kpis' });
  const tables = h('div', { class: 'grid tables' });
  const lagBox = h('div', { id: 'metrics-lag' });

  function kpi(label: string, value: string, key: string, tone = ''): HTMLElement {
    return h('div', { class: `kpi ${tone}`, 'data-kpi': key }, h('div', { class: 'kpi-value' }, value), h('div', { class: 'kpi-label' }, label));
  }

  function renderCharts(m: ScrapeMetrics): void {
    const perMinute = 60 / m.range.step;
    const rate = (xs: readonly number[]) => xs.map((x) => x * perMinute);
    const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
    for (const id of ['throughput', 'fetch-time', 'status-mix', 'bytes', 'retries-dlq']) pending.add(id);
    const step = m.range.step;
    charts.throughput.update(m.t, [
      { label: 'pages/min', color: COLORS.pages, values: rate(m.series.pages), total: sum(m.series.pages) },
      { label: 'items/min', color: COLORS.items, values: rate(m.series.items), total: sum(m.series.items) },
    ], step);
    charts.fetchTime.update(m.t, [
      { label: 'p50', color: COLORS.p50, values: m.series.p50 },
      { label: 'p95', color: COLORS.p95, values: m.series.p95 },
      { label: 'p99', color: COLORS.p99, values: m.series.p99 },
    ], step);
    const classes = Object.keys(m.series.status).length ? Object.keys(m.series.status) : ['2xx'];
    charts.status.update(
      m.t,
      classes.map((c) => ({ label: c, color: STATUS_COLORS[c] ?? '#8a8f98', values: rate(m.series.status[c] ?? m.t.map(() => 0)), total: sum(m.series.status[c] ?? []) })),
      step,
    );
    charts.bytes.update(m.t, [{ label: 'bytes/min', color: COLORS.bytes, values: rate(m.series.bytes), total: sum(m.series.bytes) }], step);
    charts.failures.update(m.t, [
      { label: 'retries/min', color: COLORS.retries, values: rate(m.series.retries), total: sum(m.series.retries) },
      { label: 'dead letters/min', color: COLORS.failed, values: rate(m.series.failed), total: sum(m.series.failed) },
    ], step);
  }

  function renderTables(m: ScrapeMetrics): void {
    const t = m.totals;
    replace(
      kpis,
      kpi('pages fetched', f.count(t.pages), 'pages'),
      kpi('items', f.count(t.items_extracted), 'items'),
      kpi('dead-lettered', f.count(t.failed), 'failed', t.failed ? 'bad' : ''),
      kpi('retries', f.count(t.retries), 'retries', t.retries ? 'warn' : ''),
      kpi('bytes', f.bytes(t.bytes), 'bytes'),
      kpi('p95 fetch', f.ms(t.p95_ms), 'p95'),
      kpi('hosts', f.count(t.hosts), 'hosts'),
      kpi('jobs', f.count(t.jobs), 'jobs'),
    );

    const selected = hostSelect.value;
    replace(hostSelect, h('option', { value: '' }, 'all hosts'), ...m.hosts.map((x) => h('option', { value: x, selected: x === selected }, x)));
    if (host && !m.hosts.includes(host)) hostSelect.append(h('option', { value: host, selected: true }, host));

    replace(
      tables,
      barList({
        id: 'top-hosts',
        title: 'Top hosts',
        rows: m.top_hosts,
        bar: { label: 'pages', value: (r) => r.pages, format: f.count },
        columns: [
          { label: 'host', value: (r) => r.host_name },
          { label: 'failed', value: (r) => f.count(r.failed), numeric: true },
          { label: 'bytes', value: (r) => f.bytes(r.bytes_sum), numeric: true },
          { label: 'p95', value: (r) => f.ms(r.p95_ms), numeric: true },
          { label: 'retries', value: (r) => f.count(r.retries), numeric: true },
        ],
      }),
      barList({
        id: 'errors-by-kind',
        title: 'Errors by kind',
        note: 'Dead-lettered fetches by error code, and pages answered with HTTP ≥ 400.',
        rows: m.errors_by_kind,
        bar: { label: 'errors', value: (r) => r.errors, format: f.count, tone: 'bad' },
        columns: [
          { label: 'kind', value: (r) => r.kind },
          { label: 'hosts', value: (r) => f.count(r.hosts), numeric: true },
          { label: 'last', value: (r) => f.ago(new Date(r.last_seen * 1000).toISOString()) },
        ],
        emptyText: 'No errors in this range.',
      }),
      barList({
        id: 'errors-by-host',
        title: 'Errors by host',
        rows: m.errors_by_host,
        bar: { label: 'errors', value: (r) => r.errors, format: f.count, tone: 'bad' },
        columns: [
          { label: 'host', value: (r) => r.host_name },
          { label: 'rate', value: (r) => f.percent(100 * r.error_rate), numeric: true },
          { label: 'top kind', value: (r) => r.top_kind },
        ],
        emptyText: 'No errors in this range.',
      }),
      barList({
        id: 'status-codes',
        title: 'Status codes',
        note: '0 = no HTTP answer (timeout, refused, robots.txt).',
        rows: m.status_codes,
        bar: { label: 'pages', value: (r) => r.pages, format: f.count },
        columns: [{ label: 'status', value: (r) => String(r.code), numeric: true }],
      }),
    );
  }

  function renderStatus(answers: readonly ScrapeMetrics[]): void {
    const step = answers[0]!.range.step;
    const q = answers.flatMap((m) => Object.entries(m.timings_ms)).sort((a, b) => b[1] - a[1])[0];
    status.textContent = `Updated ${new Date().toLocaleTimeString()} · step ${step >= 60 ? `${step / 60} min` : `${step} s`} · slowest query ${q ? `${q[0]} ${f.ms(q[1])}` : '–'}`;
  }

  function renderLag(report: LagReport): void {
    if (!report.available) {
      replace(lagBox, h('section', { class: 'panel', id: 'panel-lag' }, h('h3', {}, 'Consumer lag'), notice('warn', `Not reachable: ${report.reason ?? 'unknown'}`)));
      return;
    }
    replace(
      lagBox,
      barList({
        id: 'lag',
        title: 'Consumer lag',
        note: 'Events not yet processed: Kafka committed offsets per consumer group, Postgres positions per projection.',
        rows: report.groups,
        bar: { label: 'lag', value: (g) => g.lag, format: f.count, tone: 'bad' },
        columns: [
          { label: 'group', value: (g) => g.group },
          { label: 'kind', value: (g) => (g.kind === 'projection' ? 'projection' : `group · ${g.state ?? '?'} · ${g.members ?? 0} members`) },
          { label: 'topics', value: (g) => g.topics.map((t) => `${t.topic.replace(/^.*trawl\./, '')} ${f.count(t.lag)}`).join(', ') },
        ],
        emptyText: 'No consumer group has committed on these topics yet.',
      }),
    );
  }

  async function refresh(): Promise<void> {
    if (inFlight) return;
    inFlight = true;
    window.clearTimeout(timer);
    const seconds = RANGES.find((r) => r[0] === range)![2];
    const to = Math.ceil(Date.now() / 1000);
    replaceQuery({ range, host, job: jobId, refresh: refreshSeconds });
    const started = performance.now();
    const params = { from: to - seconds, to, host, job_id: jobId };
    try {
      // The charts' queries first, the tables' after: ClickHouse spreads each query over every core,
      // so running both at once would only make the charts wait for the tables.
      const chartAnswer = await ok(client.GET('/metrics/scrape', { params: { query: given({ ...params, panels: CHART_PANELS }) } }));
      timings.lastRequestMs = Math.round(performance.now() - started);
      timings.refreshes++;
      renderCharts(chartAnswer);
      const tableAnswer = await ok(client.GET('/metrics/scrape', { params: { query: given({ ...params, panels: TABLE_PANELS }) } }));
      renderTables(tableAnswer);
      message.replaceChildren();
      renderStatus([chartAnswer, tableAnswer]);
    } catch (err) {
      replace(message, notice('error', errorText(err)));
    } finally {
      inFlight = false;
    }
    void ok(client.GET('/metrics/lag')).then(renderLag, (err: unknown) => renderLag({ available: false, reason: errorText(err), measured_at: '', groups: [] }));
    if (refreshSeconds !== '0') timer = window.setTimeout(() => void refresh(), Number(refreshSeconds) * 1000);
  }

  rangeSelect.addEventListener('change', () => {
    range = rangeSelect.value;
    void refresh();
  });
  hostSelect.addEventListener('change', () => {
    host = hostSelect.value;
    void refresh();
  });
  jobInput.addEventListener('change', () => {
    jobId = jobInput.value.trim();
    void refresh();
  });
  refreshSelect.addEventListener('change', () => {
    refreshSeconds = refreshSelect.value;
    void refresh();
  });
  refreshButton.addEventListener('click', () => void refresh());
  const onVisible = () => {
    if (!document.hidden && refreshSeconds !== '0') void refresh();
  };
  document.addEventListener('visibilitychange', onVisible);

  outlet.append(
    pageHeader('Scrape metrics'),
    h('div', { class: 'toolbar' }, rangeSelect, hostSelect, jobInput, refreshSelect, refreshButton, status),
    message,
    kpis,
    h('div', { class: 'grid charts' }, charts.throughput.el, charts.fetchTime.el, charts.status.el, charts.bytes.el, charts.failures.el),
    tables,
    lagBox,
  );
  void refresh();
  return () => {
    window.clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisible);
    for (const c of Object.values(charts)) c.destroy();
  };
}
