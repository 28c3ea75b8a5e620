export * from './fetch-handler.ts';
export * from './ended-jobs.ts';
