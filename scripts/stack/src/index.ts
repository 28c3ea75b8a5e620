/**
 * The local stack as a library, for `npm run stack` (./cli.ts) and the `trawl up|down|status` CLI.
 */
export { stackUp, stackDown, stackStatus } from './stack.ts';
export type { StackOptions, StackUpReport, StackStatusReport, UpStep, DownStep } from './stack.ts';
export type { PartName, PartUp, PartStatus, PartDown, PartState, UpAction } from './part.ts';
export { PART_NAMES } from './part.ts';
export { StackError, MissingDependencyError, PortBusyError, PartStartError, ExternalEndpointError, DependencyFailedError, StaleStateError } from './errors.ts';
export { StackLockTimeoutError } from './lock.ts';
export { formatUpStep, formatUpSummary, formatDownStep, formatStatusTable, styleFor, PLAIN, type Style } from './report.ts';
// For fault tests (apps/harness/e2e chaos suite): restart the broker this checkout's stack owns, kill a node of a cluster.
export { createContext, type StackContext } from './context.ts';
export { kafkaDown, kafkaNodes, kafkaUp, kafkaStatus, type KafkaNode } from './kafka.ts';
export { withStackLock } from './lock.ts';
export { stackLogger } from './logger.ts';
// For the registry's fault test: a registry on its old Postgres storage, to move from; for the soak's restarts, registryDown.
export { findRegistryJar, registryAuthEnv, registryDown, registryJavaArgs } from './registry.ts';
export { registryTopics } from './registry-storage.ts';
export { jdbcFromDatabaseUrl } from './database-url.ts';
export { loadCredentials } from './credentials.ts';
export { postgresDown, postgresStatus, postgresUp } from './postgres.ts';
export { clickhouseDown, clickhouseStatus, clickhouseUp } from './clickhouse.ts';
