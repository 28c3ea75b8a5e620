export { Pipeline, type AppName, type Child, type PipelineOptions } from './pipeline.ts';
export { apiClient, until, type Api, type ApiAnswer } from './api-client.ts';
export { freePort, startApiPipeline, type ApiPipeline, type ApiPipelineOptions, type Until } from './api-pipeline.ts';
