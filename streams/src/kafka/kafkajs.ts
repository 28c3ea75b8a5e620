/**
 * The one place in Trawl that loads kafkajs. It puts the fast paths (see
 * fast-paths/install-fast-paths.ts) and the restated producer send (send-messages.ts) in place
 * first, which only works before kafkajs's modules load: everything
 * else takes kafkajs's values from here, and only types straight from 'kafkajs' (eslint holds
 * every package to that).
 *
 * Loading it with any kafkajs but the one the patches are written for throws KafkajsVersionError
 * (kafkajs-version.ts), before kafkajs itself loads.
 */
import { createRequire } from 'node:module';
import type * as KafkaJS from 'kafkajs';
import { installFastPaths } from './fast-paths/install-fast-paths.ts';
import { clampRequestQueueTimer, slowRequestTimeoutCheck } from './request-queue-timer.ts';
import { installSendMessages } from './send-messages.ts';
import { requireKafkajsVersion } from './kafkajs-version.ts';

const require = createRequire(import.meta.url);
requireKafkajsVersion(require, "streams' kafkajs loader (streams/src/kafka/kafkajs.ts)");

/** Whether kafkajs runs with Trawl's fast paths, and if not, why. */
export const kafkajsFastPaths = installFastPaths(require);

/** Whether kafkajs's producer send is Trawl's restated one (send-messages.ts), and if not, why. */
export const kafkajsSendMessages = installSendMessages(require);

const kafkajs = require('kafkajs') as typeof KafkaJS;
clampRequestQueueTimer(require);
slowRequestTimeoutCheck(require);

export const Kafka: typeof KafkaJS.Kafka = kafkajs.Kafka;
export type Kafka = KafkaJS.Kafka;
export const { AssignerProtocol, CompressionTypes, ConfigResourceTypes, logLevel, Partitioners } = kafkajs;
