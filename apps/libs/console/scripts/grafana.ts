/** `npm run grafana -w @trawl/console`: writes infra/grafana/trawl.json from infra/clickhouse/dashboards/*.sql. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { repoRoot } from '@trawl/streams';
import { loadDashboardQueries } from '../src/server/dashboards/dashboard-files.ts';
import { grafanaJson } from '../src/server/dashboards/grafana-dashboard.ts';

export const GRAFANA_FILE = join(repoRoot, 'infra', 'grafana', 'trawl.json');

mkdirSync(dirname(GRAFANA_FILE), { recursive: true });
writeFileSync(GRAFANA_FILE, grafanaJson(loadDashboardQueries()));
process.stdout.write(`wrote ${GRAFANA_FILE}\n`);
