/**
 * The app's outside world as decorations: Postgres, the event producer and the settings. Tests
 * hand in real ones (a throw-away database, a real producer); main.ts hands in the service's.
 */
import fp from 'fastify-plugin';
import type { EventProducer } from '@trawl/streams';
import type { Pool } from '@trawl/store';
import type { ApiConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Pool;
    producer: Pick<EventProducer, 'emit'>;
    config: ApiConfig;
  }
}

export interface DependenciesOptions {
  readonly pool: Pool;
  readonly producer: Pick<EventProducer, 'emit'>;
  readonly config: ApiConfig;
}

export default fp<DependenciesOptions>(
  async (fastify, { pool, producer, config }) => {
    fastify.decorate('db', pool);
    fastify.decorate('producer', producer);
    fastify.decorate('config', config);
  },
  { name: 'dependencies', fastify: '5.x' },
);
