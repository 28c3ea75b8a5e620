import { describe, expect, it } from 'vitest';
import { loadDashboardQueries, parseDashboardQuery } from './dashboard-files.ts';
import { renderQuery, type QueryValues } from './render-query.ts';

const values: QueryValues = { from: 1_795_000_000, to: 1_795_003_600, step: 60, user: 'alice', host: '', jobId: '', limit: 20 };

describe('dashboard queries', () => {
  const queries = loadDashboardQueries();

  it('reads every panel file of infra/clickhouse/dashboards, and only panel files', () => {
    expect([...queries.keys()].sort()).toEqual(['errors_by_host', 'errors_by_kind', 'fetch_time', 'hosts', 'items', 'status_codes', 'status_mix', 'throughput', 'top_hosts', 'totals']);
    for (const q of queries.values()) {
      expect(q.description, q.file).not.toBe('');
      expect(q.template, q.file).toMatch(/^SELECT/);
    }
  });

  it('scopes every query to the user and fills every placeholder', () => {
    for (const q of queries.values()) {
      expect(q.template, q.file).toContain('job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))');
      const sql = renderQuery(q.template, values);
      expect(sql, q.file).not.toMatch(/\{[a-z_]+\}/);
      expect(sql, q.file).toContain("user_id IN ('alice')");
    }
  });

  it('renders values as literals, whatever they hold', () => {
    const sql = renderQuery('SELECT 1 WHERE user_id IN ({user}) AND host = {host} AND job_id = {job_id}', { ...values, host: "x' OR '1'='1", jobId: '\\' });
    expect(sql).toBe("SELECT 1 WHERE user_id IN ('alice') AND host = 'x\\' OR \\'1\\'=\\'1' AND job_id = '\\\\'");
  });

  it('refuses to build a query without its user, or with an unknown placeholder', () => {
    expect(() => renderQuery('SELECT 1 WHERE user_id IN ({user})', { ...values, user: '' })).toThrow(/user/);
    expect(() => renderQuery('SELECT 1', values)).toThrow(/scoped/);
    expect(() => renderQuery('SELECT {user}, {table}', values)).toThrow(/unknown placeholder/);
    expect(() => renderQuery('SELECT 1 WHERE user_id IN ({user}) AND t > {from}', { ...values, from: -5 })).toThrow(TypeError);
  });

  it('reads the header lines of a file', () => {
    const q = parseDashboardQuery('x', '-- What it shows.\n-- Why.\n-- @name x_y\n-- @shape series\n-- @series a, b\n-- @title X\nSELECT 1;\n');
    expect(q).toMatchObject({ name: 'x_y', shape: 'series', series: ['a', 'b'], title: 'X', description: 'What it shows. Why.', template: 'SELECT 1' });
    expect(() => parseDashboardQuery('x', '-- @shape table\nSELECT 1')).toThrow(/@name/);
    expect(() => parseDashboardQuery('x', '-- @name x\n-- @shape pie\nSELECT 1')).toThrow(/@shape/);
  });
});
