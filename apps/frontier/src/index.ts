export * from './frontier-processor.ts';
export * from './frontier-store.ts';
export * from './migrations.ts';
