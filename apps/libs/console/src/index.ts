export { default, default as trawlConsole, type ConsoleOptions } from './server/console-plugin.ts';
export { buildBundle, currentBuild, type BundleManifest } from './server/assets/bundle.ts';
export { CONSOLE_ERRORS, ConsoleError, type ConsoleErrorCode } from './server/errors.ts';
export { CONSOLE_MIGRATIONS, CONSOLE_MIGRATION_OWNER } from './server/dead-letters/redrive-log.ts';
export { loadDashboardQueries, DASHBOARDS_DIR, type DashboardQuery } from './server/dashboards/dashboard-files.ts';
export { renderQuery } from './server/dashboards/render-query.ts';
