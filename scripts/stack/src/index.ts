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
// For fault tests (apps/harness/e2e chaos suite): restart the broker this checkout's stack owns.
export { createContext, type StackContext } from './context.ts';
export { kafkaDown, kafkaUp, kafkaStatus } from './kafka.ts';
export { withStackLock } from './lock.ts';
export { stackLogger } from './logger.ts';
