import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { KafkajsVersionError } from '../errors.ts';
import { installFastPaths } from './fast-paths/install-fast-paths.ts';
import { installedKafkajsVersion, KAFKAJS_VERSION, requireKafkajsVersion } from './kafkajs-version.ts';
import { clampRequestQueueTimer, slowRequestTimeoutCheck } from './request-queue-timer.ts';
import { installSendMessages } from './send-messages.ts';

const realRequire = createRequire(import.meta.url);

/** Node's require for this file, except that kafkajs's package.json says `version`. */
function requireSeeing(version: string): NodeJS.Require {
  const fake = ((id: string) => (id === 'kafkajs/package.json' ? { ...(realRequire(id) as object), version } : realRequire(id))) as NodeJS.Require;
  return Object.assign(fake, { resolve: realRequire.resolve, cache: realRequire.cache, main: realRequire.main, extensions: realRequire.extensions });
}

const PATCHES: readonly [string, (require: NodeJS.Require) => unknown][] = [
  ['the fast paths', (r) => installFastPaths(r)],
  ['the restated producer send', (r) => installSendMessages(r)],
  ['the restated pending-requests timer', (r) => clampRequestQueueTimer(r)],
  ['the restated request-timeout check', (r) => slowRequestTimeoutCheck(r)],
];

describe('the kafkajs version the patches are written for', () => {
  it('is the installed one', () => {
    expect(installedKafkajsVersion(realRequire)).toBe(KAFKAJS_VERSION);
    expect(() => requireKafkajsVersion(realRequire, 'a patch')).not.toThrow();
  });

  it.each(PATCHES)('%s: another kafkajs is refused, both versions named', (name, install) => {
    const attempt = () => install(requireSeeing('2.3.0'));
    expect(attempt, name).toThrow(KafkajsVersionError);
    expect(attempt, name).toThrow(`kafkajs 2.3.0 is installed, but ${name}`);
    expect(attempt, name).toThrow(`kafkajs ${KAFKAJS_VERSION}'s internals`);
  });

  it('stops a process that loads kafkajs through streams when kafkajs is another version', () => {
    // A real process whose kafkajs/package.json reads 9.9.9 (a module hook rewrites it as it loads).
    const script = `
      import { registerHooks } from 'node:module';
      registerHooks({
        load(url, context, next) {
          const loaded = next(url, context);
          if (!url.endsWith('/kafkajs/package.json')) return loaded;
          return { ...loaded, source: JSON.stringify({ ...JSON.parse(String(loaded.source)), version: '9.9.9' }) };
        },
      });
      try {
        await import(${JSON.stringify(new URL('./kafkajs.ts', import.meta.url).href)});
        console.log('loaded');
      } catch (e) {
        console.log(e.code, e.message);
      }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stdout.trim()).toMatch(new RegExp(`^TRAWL_KAFKAJS_VERSION kafkajs 9\\.9\\.9 is installed, but .* kafkajs ${KAFKAJS_VERSION.replaceAll('.', '\\.')}'s internals`));
  });
});
