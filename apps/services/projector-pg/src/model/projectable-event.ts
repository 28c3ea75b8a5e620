/**
 * An event as the read models see it: its type and body, and for a replay its place in the log.
 * The live planner (plan-batch.ts), event identity (event-identity.ts) and the replay's bulk build
 * (replay/bulk-build.ts) all take these, so the shape has a module of its own below them.
 */
import type { DecodedEvent } from '@trawl/streams';

/** What planBatch needs to know of an event: its type and body (a DecodedEvent fits). */
export type ProjectableEvent = Pick<DecodedEvent, 'name' | 'value'>;

/** An event with its place in the log (a RangeEvent fits). */
export type PositionedEvent = ProjectableEvent & { readonly partition: number; readonly offset: bigint };
