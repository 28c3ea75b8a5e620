/**
 * The one kafkajs version Trawl's patches are written for, and the check each of them makes before
 * it touches kafkajs's internals.
 *
 * The patches (fast-paths/, send-messages.ts, request-queue-timer.ts) replace kafkajs modules and
 * methods by their file paths and by the fields they read and write on kafkajs's objects; none of
 * that is kafkajs's public API, and any other release may move it. Running them on another version
 * could write wrong bytes or lose acknowledged messages without a word, and running kafkajs without
 * them would silently bring back the send that loses records when a leader moves
 * (send-messages.ts). So a process whose kafkajs is not this version refuses to start: an upgrade
 * is a deliberate change that re-checks every patch against the new sources (their tests hold each
 * to kafkajs's own module) and then moves this constant.
 */
import { KafkajsVersionError } from '../errors.ts';

export const KAFKAJS_VERSION = '2.2.4';

/** The installed kafkajs's version, as `require` resolves it. */
export function installedKafkajsVersion(require: NodeJS.Require): string {
  return (require('kafkajs/package.json') as { version: string }).version;
}

/** Throws KafkajsVersionError, naming both versions, when the installed kafkajs is not the one `patch` is written for. */
export function requireKafkajsVersion(require: NodeJS.Require, patch: string): void {
  const installed = installedKafkajsVersion(require);
  if (installed === KAFKAJS_VERSION) return;
  throw new KafkajsVersionError(
    `kafkajs ${installed} is installed, but ${patch} patches kafkajs ${KAFKAJS_VERSION}'s internals and is known only for that version: ` +
      `install kafkajs ${KAFKAJS_VERSION}, or check every patch of streams/src/kafka against kafkajs ${installed}'s sources and move KAFKAJS_VERSION`,
  );
}
