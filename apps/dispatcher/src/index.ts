export * from './dispatch-plan.ts';
export * from './dispatcher.ts';
export * from './seed.ts';
