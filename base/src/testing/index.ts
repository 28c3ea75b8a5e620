/** Helpers for tests (`@trawl/base/testing`). */
export { kafkaPackagesIn, modulesLoadedBy, type LoadedModules } from './loaded-modules.ts';
