/**
 * The app's outside world as decorations: Postgres, the event producer, the settings and the key
 * that seals webhook secrets. Tests hand in real ones (a throw-away database, a real producer);
 * main.ts hands in the service's.
 */
import fp from 'fastify-plugin';
import { ContentStore } from '@trawl/content';
import type { EventProducer } from '@trawl/streams';
import type { Pool } from '@trawl/store';
import { secretBoxFromEnv, type SecretBox } from '@trawl/store/secrets';
import type { ApiConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Pool;
    producer: Pick<EventProducer, 'emit'>;
    config: ApiConfig;
    /** The content store of pages' bodies and formats (S3). */
    content: Pick<ContentStore, 'get' | 'delete'>;
    /** Seals the webhook secrets users give (TRAWL_SECRETS_KEY); nothing in the API opens them. */
    secrets: SecretBox;
  }
}

export interface DependenciesOptions {
  readonly pool: Pool;
  readonly producer: Pick<EventProducer, 'emit'>;
  readonly config: ApiConfig;
  /** Default: the store of TRAWL_S3_URL / TRAWL_S3_BUCKET, which connects on first use. */
  readonly content?: ContentStore;
  /**
   * Default: the keys of TRAWL_SECRETS_KEY / TRAWL_SECRETS_OLD_KEYS (environment, else stack.env),
   * read when a secret is first sealed, so an app that never writes one (the offline OpenAPI
   * build) needs no key. main.ts reads them before it starts, to refuse to start without one.
   */
  readonly secrets?: SecretBox;
}

export default fp<DependenciesOptions>(
  async (fastify, { pool, producer, config, content, secrets }) => {
    const store = content ?? new ContentStore();
    fastify.decorate('content', store);
    if (!content) fastify.addHook('onClose', async () => store.close());
    fastify.decorate('db', pool);
    fastify.decorate('producer', producer);
    fastify.decorate('config', config);
    let box = secrets;
    fastify.decorate('secrets', { getter: () => (box ??= secretBoxFromEnv(process.env, 'the API')) });
  },
  { name: 'dependencies', fastify: '5.x' },
);
