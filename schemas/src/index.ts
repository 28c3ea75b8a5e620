export * from './names.ts';
export * from './generated/events.ts';
export { eventSchema, allEventSchemas, AVRO_DIR } from './load.ts';
export { samples, sampleSpec } from './samples.ts';
export { backwardProblems, checkSchemas, releasedVersions, canonical, RELEASED_DIR, FIXTURES_DIR } from './compat.ts';
export { avroType, avroTypeOptions } from './avro-type.ts';
export { uuidV5 } from './uuid-v5.ts';
