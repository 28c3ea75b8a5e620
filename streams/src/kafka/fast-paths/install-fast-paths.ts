/**
 * Puts the fast paths in place of three kafkajs-internal modules, before kafkajs loads.
 *
 * kafkajs (unmaintained since 2.2.4, 2023) spends most of a busy producer's or consumer's CPU in
 * three places: the produce request encoder, the per-partition grouping of a send, and the record
 * decoder (see streams/README.md). Each is one CommonJS module; this replaces that module's
 * exports in Node's module cache, so the kafkajs modules that `require` it afterwards get ours.
 * That only works before those modules are loaded, which is why `kafka/kafkajs.ts` — the one
 * place in Trawl that loads kafkajs — calls this first.
 *
 * It throws KafkajsVersionError when kafkajs is not the version these were written and tested
 * against (kafkajs-version.ts). It does nothing, and says why in the returned status, when kafkajs
 * was loaded before it ran, or when TRAWL_KAFKAJS_FAST_PATHS=0 (the switch for side-by-side
 * benchmarks and a way out).
 *
 * Upstream, each would be a change to the module it replaces, with the same tests (each held to
 * kafkajs's own output over random inputs in fast-paths.test.ts); none changes kafkajs's API.
 */
import { groupMessagesPerPartition } from './group-by-partition.ts';
import { loadInternals } from './kafkajs-internals.ts';
import { fastProduceRequest, type ProduceRequestFactory } from './produce-request.ts';
import { fastRecordDecoder, type RecordDecoder } from './record-decoder.ts';
import { requireKafkajsVersion } from '../kafkajs-version.ts';

const MARK = Symbol.for('trawl.kafkajs-fast-path');

/** Each replaced module, and the kafkajs modules that take it in at their own load. */
const TARGETS = {
  groupMessagesPerPartition: {
    file: 'kafkajs/src/producer/groupMessagesPerPartition.js',
    usedBy: ['kafkajs/src/producer/sendMessages.js'],
  },
  produceRequest: {
    file: 'kafkajs/src/protocol/requests/produce/v3/request.js',
    usedBy: ['v4', 'v5', 'v6', 'v7'].map((v) => `kafkajs/src/protocol/requests/produce/${v}/request.js`),
  },
  recordDecoder: {
    file: 'kafkajs/src/protocol/recordBatch/record/v0/decoder.js',
    usedBy: ['kafkajs/src/protocol/recordBatch/v0/decoder.js'],
  },
} as const;

export type FastPathName = keyof typeof TARGETS;

export interface FastPathsStatus {
  readonly active: boolean;
  /** Why not, when not active. */
  readonly reason?: string;
  /** kafkajs's own implementations, kept for the tests that hold the fast paths to them. */
  readonly originals?: {
    readonly groupMessagesPerPartition: typeof groupMessagesPerPartition;
    readonly produceRequest: ProduceRequestFactory;
    readonly recordDecoder: RecordDecoder;
  };
}

type Marked = { [MARK]?: FastPathsStatus['originals'] };

export function installFastPaths(require: NodeJS.Require, env: NodeJS.ProcessEnv = process.env): FastPathsStatus {
  requireKafkajsVersion(require, 'the fast paths (streams/src/kafka/fast-paths)');
  if (env.TRAWL_KAFKAJS_FAST_PATHS === '0') return { active: false, reason: 'off: TRAWL_KAFKAJS_FAST_PATHS=0' };

  const path = (file: string) => require.resolve(file);
  const cached = (file: string) => require.cache[path(file)];
  // Already in place (another copy of this module ran in the process, as vitest does per file).
  const present = (cached(TARGETS.recordDecoder.file)?.exports as Marked | undefined)?.[MARK];
  if (present) return { active: true, originals: present };

  const early = Object.values(TARGETS).flatMap((t) => t.usedBy.filter((f) => cached(f)));
  if (early.length > 0) return { active: false, reason: `kafkajs was loaded before its fast paths (${early.join(', ')})` };

  const internals = loadInternals(require);
  const originals = {
    groupMessagesPerPartition: require(TARGETS.groupMessagesPerPartition.file) as typeof groupMessagesPerPartition,
    produceRequest: require(TARGETS.produceRequest.file) as ProduceRequestFactory,
    recordDecoder: require(TARGETS.recordDecoder.file) as RecordDecoder,
  };
  const replacements: Record<FastPathName, object> = {
    groupMessagesPerPartition,
    produceRequest: fastProduceRequest(originals.produceRequest, internals),
    recordDecoder: fastRecordDecoder(internals),
  };
  for (const name of Object.keys(TARGETS) as FastPathName[]) {
    const replacement = Object.assign(replacements[name], { [MARK]: originals });
    cached(TARGETS[name].file)!.exports = replacement;
  }
  return { active: true, originals };
}
