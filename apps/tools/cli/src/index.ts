/** The CLI's building blocks, for scripts and tests (the command itself is bin/trawl.js). */
export { ApiClient, apiBaseUrl, readApiKey } from './lib/api-client.ts';
export { followLogs } from './lib/log-stream.ts';
export { ProgressModel, renderBar } from './lib/progress.ts';
export { serviceCatalogue } from './services/catalogue.ts';
export { demoPort, localFetchAllow, serviceEnv } from './commands/up.ts';
