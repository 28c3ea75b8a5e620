/**
 * The Grafana dashboard (infra/grafana/trawl.json), generated from the same SQL files as the
 * console, so the two cannot drift (a test compares the committed JSON with this output).
 *
 * Data source: Altinity's ClickHouse plugin (`vertamedia-clickhouse-datasource`). It talks HTTP
 * and supports ClickHouse 18.16; Grafana's own ClickHouse plugin needs a far newer server. Its
 * macros: `$from` / `$to` (Unix seconds), `$interval` (bucket seconds); time series want the time
 * column first, in milliseconds, and several series per time as `groupArray((name, value))`.
 *
 * Grafana is an operator's view: a `user` variable (multi-value, "All") picks whose jobs to show,
 * where the console always shows the signed-in user's own.
 */
import type { DashboardQuery } from './dashboard-files.ts';

export const GRAFANA_DATASOURCE_TYPE = 'vertamedia-clickhouse-datasource';

const GRAFANA_VALUES: Readonly<Record<string, string>> = {
  from: '$from',
  to: '$to',
  step: '$interval',
  user: '$user',
  host: "'$host'",
  job_id: "'$job_id'",
  limit: '20',
};

/** The query with Grafana's macros and variables in place of the console's placeholders. */
export function grafanaSql(q: DashboardQuery): string {
  const sql = q.template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => {
    const v = GRAFANA_VALUES[name];
    if (v === undefined) throw new Error(`${q.file}.sql: no Grafana value for {${name}}`);
    return v;
  });
  const inner = sql.replace(/\n/g, '\n    ');
  if (q.shape === 'series') return `SELECT t * 1000 AS t, ${q.series.join(', ')}\nFROM (\n    ${inner}\n)\nORDER BY t`;
  if (q.shape === 'series-by') return `SELECT t * 1000 AS t, groupArray((series, value)) AS groupArr\nFROM (\n    ${inner}\n)\nGROUP BY t\nORDER BY t`;
  return sql;
}

const datasource = { type: GRAFANA_DATASOURCE_TYPE, uid: '${datasource}' };

function target(q: DashboardQuery) {
  return {
    refId: 'A',
    datasource,
    query: grafanaSql(q),
    rawQuery: true,
    format: q.shape === 'table' ? 'table' : 'time_series',
    intervalFactor: 1,
    // Grafana's `$interval` minimum: the console's smallest bucket.
    interval: '10s',
  };
}

interface PanelSpec {
  readonly query: string;
  readonly title: string;
  readonly type: 'timeseries' | 'table' | 'stat';
  readonly unit?: string;
  readonly fields?: readonly string[];
  readonly stacked?: boolean;
  readonly w: number;
  readonly h: number;
  readonly description?: string;
}

const LAYOUT: readonly PanelSpec[] = [
  { query: 'totals', title: 'Totals', type: 'stat', w: 24, h: 4 },
  { query: 'throughput', title: 'Pages fetched and dead-lettered per bucket', type: 'timeseries', fields: ['t', 'pages', 'failed'], w: 12, h: 8 },
  { query: 'items', title: 'Items extracted per bucket', type: 'timeseries', w: 12, h: 8 },
  { query: 'fetch_time', title: 'Fetch time p50 / p95 / p99', type: 'timeseries', unit: 'ms', w: 12, h: 8 },
  { query: 'status_mix', title: 'Status-code mix', type: 'timeseries', stacked: true, w: 12, h: 8 },
  { query: 'throughput', title: 'Bytes per bucket', type: 'timeseries', unit: 'decbytes', fields: ['t', 'bytes_sum'], w: 12, h: 8 },
  { query: 'throughput', title: 'Retries and dead letters per bucket', type: 'timeseries', fields: ['t', 'retries', 'failed'], w: 12, h: 8 },
  { query: 'top_hosts', title: 'Top hosts', type: 'table', w: 12, h: 9 },
  { query: 'errors_by_kind', title: 'Errors by kind', type: 'table', w: 12, h: 9 },
  { query: 'errors_by_host', title: 'Errors by host', type: 'table', w: 12, h: 9 },
  { query: 'status_codes', title: 'Status codes', type: 'table', w: 12, h: 9 },
];

export function grafanaDashboard(queries: ReadonlyMap<string, DashboardQuery>): Record<string, unknown> {
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  const panels: Record<string, unknown>[] = LAYOUT.map((p, i) => {
    const q = queries.get(p.query);
    if (!q) throw new Error(`the Grafana layout names a query that is not in infra/clickhouse/dashboards: ${p.query}`);
    if (x + p.w > 24) {
      x = 0;
      y += rowHeight;
      rowHeight = 0;
    }
    const gridPos = { x, y, w: p.w, h: p.h };
    x += p.w;
    rowHeight = Math.max(rowHeight, p.h);
    return {
      id: i + 1,
      type: p.type,
      title: p.title,
      description: `${q.description} (infra/clickhouse/dashboards/${q.file}.sql)`,
      datasource,
      gridPos,
      targets: [target(q)],
      fieldConfig: {
        defaults: {
          ...(p.unit ? { unit: p.unit } : {}),
          ...(p.type === 'timeseries' ? { custom: { drawStyle: 'line', lineWidth: 2, fillOpacity: p.stacked ? 40 : 10, showPoints: 'auto', spanNulls: false, stacking: { mode: p.stacked ? 'normal' : 'none', group: 'A' } } } : {}),
        },
        overrides: [],
      },
      options: p.type === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'none', graphMode: 'none', textMode: 'value_and_name' } : {},
      ...(p.fields ? { transformations: [{ id: 'filterFieldsByName', options: { include: { names: [...p.fields] } } }] } : {}),
    };
  });
  panels.push({
    id: panels.length + 1,
    type: 'text',
    title: 'Consumer lag',
    gridPos: { x: 0, y: y + rowHeight, w: 24, h: 3 },
    options: {
      mode: 'markdown',
      content: 'Consumer lag is not in ClickHouse: the console shows it per group at `/#/metrics` (`GET /metrics/lag`, from Kafka committed offsets and Postgres projection positions).',
    },
  });
  return {
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '9.0.0' },
      { type: 'datasource', id: GRAFANA_DATASOURCE_TYPE, name: 'Altinity plugin for ClickHouse', version: '2.5.0' },
    ],
    uid: 'trawl-scrape-metrics',
    title: 'Trawl — scrape metrics',
    description: 'Generated from infra/clickhouse/dashboards/*.sql by `npm run grafana -w @trawl/console`; do not edit by hand.',
    tags: ['trawl', 'clickhouse'],
    timezone: 'utc',
    schemaVersion: 39,
    version: 1,
    editable: true,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    templating: {
      list: [
        { name: 'datasource', label: 'ClickHouse', type: 'datasource', query: GRAFANA_DATASOURCE_TYPE, current: {}, hide: 0 },
        {
          name: 'user',
          label: 'User',
          type: 'query',
          datasource,
          query: "SELECT DISTINCT user_id FROM job_events WHERE user_id != '' ORDER BY user_id",
          refresh: 2,
          multi: true,
          includeAll: true,
          current: { selected: true, text: ['All'], value: ['$__all'] },
          hide: 0,
        },
        { name: 'host', label: 'Host (empty: all)', type: 'textbox', query: '', current: { text: '', value: '' }, hide: 0 },
        { name: 'job_id', label: 'Job id (empty: all)', type: 'textbox', query: '', current: { text: '', value: '' }, hide: 0 },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

/** The file's text: stable key order and a trailing newline, so regeneration only changes what changed. */
export function grafanaJson(queries: ReadonlyMap<string, DashboardQuery>): string {
  return `${JSON.stringify(grafanaDashboard(queries), null, 2)}\n`;
}
