/**
 * replayAndSwap: the one protocol by which a read model is rebuilt from the topics into a shadow
 * while its live projector keeps writing, verified, and swapped in. A store (Postgres tables,
 * a ClickHouse database) takes part through a ReplayTarget; the reading, the rounds, the
 * handshake with the live projector and the report are written here once, so a fix to the
 * protocol is made once.
 *
 * How it meets the live projector. The replay reads each partition up to where the live read
 * model stands (`liveTargets`: its stored offsets, or the positions in its rows), never past it,
 * in rounds, since that point moves. When little is left (`swapThreshold`, or after `maxRounds`)
 * it holds the live projector back (`holdLive`): the live batch in flight finishes, the next one
 * waits. Held, the live positions no longer move; the replay reads the last stretch up to exactly
 * them, so shadow and live hold the same events and their checksums must be equal. Then the
 * target swaps (live → old, shadow → live) and lets go; the waiting live batch goes on, into the
 * new read model, from the positions it already had. Nothing is applied twice or skipped.
 *
 * With nothing live (a fresh store, a benchmark) the replay reads to the end of the log.
 *
 * Positions count a message the replay skipped as undecodable as read: the live projector
 * dead-lettered it and stands after it too.
 */
import type { createKafka } from '../kafka/client.ts';
import { createLogger, type Logger } from '@trawl/base';
import { createKafka as makeKafka } from '../kafka/client.ts';
import { EventCodec } from '../registry/event-codec.ts';
import { watermarks } from '../reader/log-positions.ts';
import { rangeKey, readRanges, type PartitionRange, type RangeEvent } from '../reader/range-reader.ts';
import { ProgressTracker, stderrProgress, type ProgressSink } from '../reader/replay-progress.ts';

type Kafka = ReturnType<typeof createKafka>;

/** Options every replay takes; a target's own options extend them. */
export interface ReplayOptions {
  /** `earliest` (default) or a time, for targets that can start there (`startFrom`). */
  readonly from?: 'earliest' | Date;
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  readonly logger?: Logger;
  /** Events per apply call; the target's default. */
  readonly batchSize?: number;
  /** Events left to read below which the replay holds the live projector back and swaps; the target's default. */
  readonly swapThreshold?: number;
  /** Catch-up rounds before the replay swaps whatever is left (a fast live log may never get below the threshold). Default 10. */
  readonly maxRounds?: number;
  /** Compare with the live read model (same version only). Default true. */
  readonly verify?: boolean;
  /** Keep the replaced read model (`…old_<replay id>`) instead of dropping it. Default false. */
  readonly keepOld?: boolean;
  /** Default: a line on stderr each second. Pass `null` for silence. */
  readonly progress?: ProgressSink | null;
  readonly signal?: AbortSignal;
}

export interface ReplayOffset {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
}

export type ReplayVerified = 'live' | 'no live tables' | 'version change' | 'disabled';

export interface ReplayReport<C> {
  readonly projection: string;
  readonly replayId: string;
  readonly events: number;
  readonly undecodable: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** How long the live projector was held back for the last stretch, verification and swap. */
  readonly pausedMs: number;
  readonly offsets: readonly ReplayOffset[];
  readonly checksum: C;
  /** 'live': equal to the live read model at the same positions; otherwise why it was not compared. */
  readonly verified: ReplayVerified;
  readonly previousVersion: number | null;
}

/** Next offsets by `rangeKey(topic, partition)`. */
export type Positions = Map<string, bigint>;

/** What a target is told when it swaps. */
export interface SwapContext {
  /** Where the replay stands: exactly the live positions when something was live. */
  readonly positions: Positions;
  /** The read ended at the live read model's positions (false: at the log's end, nothing was live). */
  readonly capped: boolean;
}

/**
 * A store's part in the replay. Called in this order: lock, inspect, createShadow, startFrom (a
 * time given), then apply/flush while reading, settle (once, between catch-up rounds), holdLive,
 * checksum, swap, releaseLive, dropOld; cleanup always, last (also when lock failed).
 */
export interface ReplayTarget<C> {
  /** `pg`, `ch`: progress lines, the logger and the Kafka client id. */
  readonly label: string;
  /** `replayIdOf(start time)`: names the shadow and the old read model a replay keeps. */
  readonly replayId: string;
  /** The name this version reports (and stores its offsets under), e.g. `pg-v4`. */
  readonly projection: string;
  readonly version: number;
  /** The topics it projects, in the order their events are best applied. */
  readonly topics: readonly string[];
  readonly defaults: { readonly batchSize: number; readonly swapThreshold: number };
  /**
   * Whether the live positions count every event, so that under the hold the replay must stand at
   * exactly them (Postgres: stored offsets). False when they are read from rows that skip events
   * the read model does not keep (ClickHouse's facts): the replay may then stand past them.
   */
  readonly exactLivePositions: boolean;
  /** Events per readRanges batch, when the target batches its writes itself (default: batchSize). */
  readonly readChunk?: number;
  /** What the catch-up reads up to while something is live ("the offsets of live pg-v4"). */
  liveLabel(previousVersion: number): string;
  /** Takes the replay lock, so only one replay of this read model runs; throws when another holds it. */
  lock(): Promise<void>;
  /** Drops what earlier replays left; the live read model's version, undefined when nothing is live. */
  inspect(): Promise<number | undefined>;
  /** Creates the empty shadow read model. */
  createShadow(): Promise<void>;
  /** Moves the start positions (in place) to `at` and keeps what came before (absent: only `earliest`). */
  startFrom?(at: Date, context: { readonly positions: Positions; readonly previousVersion: number | undefined; readonly kafka: Kafka }): Promise<void>;
  /** The live read model's next positions (only those it knows), undefined when nothing is live. */
  liveTargets(previousVersion: number | undefined): Promise<Positions | undefined>;
  /** Reads split into passes run one after another (default: one pass of all ranges). */
  passes?(ranges: PartitionRange[]): PartitionRange[][];
  /** Writes a decoded batch into the shadow; called in offset order per partition. */
  apply(events: RangeEvent[]): Promise<void>;
  /** Makes everything applied durable; called after each pass, before its positions count. */
  flush?(): Promise<void>;
  /** Work between the bulk catch-up and the last rounds (index builds); `rounds`: catch-up rounds after it. */
  readonly settle?: { readonly note: string; readonly rounds: number; run(): Promise<void> };
  /** Holds the live projector back (its next write waits) until releaseLive. */
  holdLive(): Promise<void>;
  /** Lets the live projector go; `swapped` false after a failure: undo what the hold began. Throws when the swap did not hold. */
  releaseLive(swapped: boolean): Promise<void>;
  checksum(which: 'shadow' | 'live'): Promise<C>;
  differences(replayed: C, live: C): string[];
  /** Renames shadow → live (and live → old), under the hold. */
  swap(context: SwapContext): Promise<void>;
  /** After the swap: drops the replaced read model unless kept. */
  dropOld(keepOld: boolean): Promise<void>;
  /** Always, last: drops the shadow when not swapped, lets the replay lock go, closes connections. */
  cleanup(swapped: boolean): Promise<void>;
  readonly errors: {
    newerLive(previousVersion: number): Error;
    verification(differences: string[], checksums: { replayed: C; live: C }): Error;
  };
}

function splitKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf(':');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

function rangesFrom(positions: Positions, to: Positions): PartitionRange[] {
  return [...to].map(([key, end]) => ({ ...splitKey(key), from: positions.get(key) ?? 0n, to: end }));
}

const remaining = (ranges: readonly PartitionRange[]): number => ranges.reduce((s, r) => s + Math.max(0, Number(r.to - r.from)), 0);
const lagOf = (positions: Positions, high: Positions): number => [...high].reduce((s, [k, h]) => s + Math.max(0, Number(h - (positions.get(k) ?? 0n))), 0);

export async function replayAndSwap<C>(target: ReplayTarget<C>, options: ReplayOptions = {}): Promise<ReplayReport<C>> {
  const logger = options.logger ?? createLogger(`replay-${target.label}`);
  const kafka = options.kafka ?? makeKafka({ clientId: `trawl-replay-${target.label}`, logger });
  const codec = options.codec ?? new EventCodec();
  const batchSize = options.batchSize ?? target.defaults.batchSize;
  const swapThreshold = options.swapThreshold ?? target.defaults.swapThreshold;
  const maxRounds = options.maxRounds ?? 10;
  const progress = new ProgressTracker(options.progress === null ? undefined : (options.progress ?? stderrProgress(target.label)));
  const started = Date.now();
  const topics = target.topics;

  let swapped = false;
  try {
    await target.lock();
    const previous = await target.inspect();
    if (previous !== undefined && previous > target.version) throw target.errors.newerLive(previous);
    await target.createShadow();

    const positions: Positions = new Map();
    for (const w of await watermarks(kafka, topics)) positions.set(rangeKey(w.topic, w.partition), w.low);
    if (options.from instanceof Date) {
      if (!target.startFrom) throw new Error(`a ${target.label} replay starts at the earliest offsets`);
      await target.startFrom(options.from, { positions, previousVersion: previous, kafka });
    }
    let undecodable = 0;
    const advance = (topic: string, partition: number, offset: bigint): void => {
      const k = rangeKey(topic, partition);
      if ((positions.get(k) ?? 0n) <= offset) positions.set(k, offset + 1n);
    };

    /** Where each partition's read ends: the live positions, or the end of the log when nothing is live. */
    const targets = async (): Promise<{ to: Positions; high: Positions; capped: boolean }> => {
      const wm = await watermarks(kafka, topics);
      const high: Positions = new Map(wm.map((w) => [rangeKey(w.topic, w.partition), w.high]));
      const live = await target.liveTargets(previous);
      if (!live || live.size === 0) return { to: high, high, capped: false };
      const to: Positions = new Map(wm.map((w) => [rangeKey(w.topic, w.partition), 0n]));
      for (const [k, o] of live) to.set(k, o);
      return { to, high, capped: true };
    };
    const readPass = async (ranges: PartitionRange[]): Promise<void> => {
      const r = await readRanges({
        kafka, codec, ranges, batchSize: target.readChunk ?? batchSize, signal: options.signal,
        onBatch: async (events) => {
          await target.apply(events);
          for (const e of events) advance(e.topic, e.partition, e.offset);
          progress.add(events.length);
        },
        onUndecodable: (where, err) => {
          logger.warn({ ...where, offset: String(where.offset), err: err.message }, 'undecodable message skipped');
          advance(where.topic, where.partition, where.offset);
        },
      });
      // Everything read is stored before the pass's positions count.
      await target.flush?.();
      undecodable += r.undecodable;
    };
    const read = async (ranges: PartitionRange[]): Promise<void> => {
      for (const pass of target.passes?.(ranges) ?? [ranges]) await readPass(pass);
    };
    /** Reads rounds until what is left is below the threshold (or the rounds run out). */
    let rounds = 0;
    const catchUp = async (maxRoundsNow: number): Promise<void> => {
      for (let round = 0; ; round++) {
        const t = await targets();
        const ranges = rangesFrom(positions, t.to);
        progress.lag = lagOf(positions, t.high);
        if (remaining(ranges) <= swapThreshold || round >= maxRoundsNow) return;
        rounds++;
        await read(ranges);
      }
    };

    progress.enter('catch-up', previous === undefined ? 'up to the end of the log' : `up to ${target.liveLabel(previous)}`);
    await catchUp(maxRounds);
    if (target.settle) {
      progress.enter('index', target.settle.note);
      await target.settle.run();
      progress.enter('catch-up', 'the stretch that arrived while indexing');
      await catchUp(target.settle.rounds);
    }

    // The last stretch, the check and the swap, with the live projector held back.
    progress.enter('swap', 'pausing the live projector');
    await target.holdLive();
    const pausedAt = Date.now();
    let checksum: C | undefined;
    let verified: ReplayVerified;
    try {
      const t = await targets();
      await read(rangesFrom(positions, t.to));
      for (const [k, end] of t.to) {
        const at = positions.get(k) ?? 0n;
        if (at < end || (at > end && target.exactLivePositions)) throw new Error(`replay position of ${k} is ${at}, expected ${end}`);
      }
      if (options.verify === false) verified = 'disabled';
      else if (previous === undefined) verified = 'no live tables';
      else if (previous !== target.version) verified = 'version change';
      else {
        // Compared while held: the live read model cannot move while both are summed.
        checksum = await target.checksum('shadow');
        const live = await target.checksum('live');
        const diff = target.differences(checksum, live);
        if (diff.length > 0) throw target.errors.verification(diff, { replayed: checksum, live });
        verified = 'live';
      }
      await target.swap({ positions, capped: t.capped });
    } catch (err) {
      await target.releaseLive(false).catch(() => undefined);
      throw err;
    }
    await target.releaseLive(true);
    swapped = true;
    const pausedMs = Date.now() - pausedAt;
    // Nothing compared: the figures are for the report, summed after the live projector was let go.
    checksum ??= await target.checksum('live');
    await target.dropOld(options.keepOld ?? false);

    const seconds = (Date.now() - started) / 1000;
    progress.enter('done', `swapped in ${pausedMs} ms, verified: ${verified}`);
    return {
      projection: target.projection,
      replayId: target.replayId,
      events: progress.events,
      undecodable,
      rounds,
      seconds,
      eventsPerSecond: progress.events / seconds,
      pausedMs,
      offsets: [...positions].map(([k, v]) => ({ ...splitKey(k), nextOffset: String(v) })),
      checksum,
      verified,
      previousVersion: previous ?? null,
    };
  } finally {
    await target.cleanup(swapped);
  }
}

/** A replay's id, from its start time: names its shadow and the old read model it keeps. */
export function replayIdOf(started: number): string {
  return `r${started.toString(36)}`;
}
