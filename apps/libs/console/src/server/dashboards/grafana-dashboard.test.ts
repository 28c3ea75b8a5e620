import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@trawl/streams';
import { scratchClickHouse, type ScratchClickHouse } from '../../../test/support/clickhouse-scratch.ts';
import { loadDashboardQueries } from './dashboard-files.ts';
import { grafanaDashboard, grafanaJson, grafanaSql } from './grafana-dashboard.ts';

const queries = loadDashboardQueries();
let ch: ScratchClickHouse;

beforeAll(async () => {
  ch = await scratchClickHouse('grafana_test');
});
afterAll(async () => ch?.drop());

describe('the Grafana dashboard', () => {
  it('is generated from the dashboard SQL (run `npm run grafana -w @trawl/console` after changing it)', () => {
    expect(readFileSync(join(repoRoot, 'infra', 'grafana', 'trawl.json'), 'utf8')).toBe(grafanaJson(queries));
  });

  it("uses the ClickHouse data source through a variable, and the console's scoping by user", () => {
    const d = grafanaDashboard(queries) as { panels: { datasource?: { type: string; uid: string }; targets?: { query: string }[] }[] };
    for (const p of d.panels.filter((x) => x.targets)) {
      expect(p.datasource).toEqual({ type: 'vertamedia-clickhouse-datasource', uid: '${datasource}' });
      expect(p.targets![0]!.query).toContain('user_id IN ($user)');
      expect(p.targets![0]!.query).not.toMatch(/\{[a-z_]+\}/);
    }
  });

  it('runs on this ClickHouse once Grafana has filled its macros', async () => {
    for (const q of queries.values()) {
      const sql = grafanaSql(q)
        .replace(/\$from/g, '1795000000')
        .replace(/\$to/g, '1795003600')
        .replace(/\$interval/g, '60')
        .replace(/\$user/g, "'alice','bob'")
        .replace(/\$host/g, '')
        .replace(/\$job_id/g, '');
      await expect(ch.rows(sql), q.file).resolves.toEqual(expect.any(Array));
    }
  });
});
