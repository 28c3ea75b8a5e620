/**
 * The app's outside world as decorations: Postgres, the event producer and the settings. Tests
 * hand in real ones (a throw-away database, a real producer); main.ts hands in the service's.
 */
import fp from 'fastify-plugin';
import { ContentStore } from '@trawl/content';
import type { EventProducer } from '@trawl/streams';
import type { Pool } from '@trawl/store';
import type { ApiConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Pool;
    producer: Pick<EventProducer, 'emit'>;
    config: ApiConfig;
    /** The content store of pages' bodies and formats (S3). */
    content: Pick<ContentStore, 'get' | 'delete'>;
  }
}

export interface DependenciesOptions {
  readonly pool: Pool;
  readonly producer: Pick<EventProducer, 'emit'>;
  readonly config: ApiConfig;
  /** Default: the store of TRAWL_S3_URL / TRAWL_S3_BUCKET, which connects on first use. */
  readonly content?: ContentStore;
}

export default fp<DependenciesOptions>(
  async (fastify, { pool, producer, config, content }) => {
    const store = content ?? new ContentStore();
    fastify.decorate('content', store);
    if (!content) fastify.addHook('onClose', async () => store.close());
    fastify.decorate('db', pool);
    fastify.decorate('producer', producer);
    fastify.decorate('config', config);
  },
  { name: 'dependencies', fastify: '5.x' },
);
