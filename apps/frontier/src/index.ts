export * from './deadline-sweeper.ts';
export * from './fetch-deadline.ts';
export * from './frontier-processor.ts';
export * from './frontier-store.ts';
export * from './log-clock.ts';
export * from './migrations.ts';
