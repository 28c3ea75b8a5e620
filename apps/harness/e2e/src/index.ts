export { Pipeline, type AppName, type Child, type PipelineOptions } from './pipeline.ts';
