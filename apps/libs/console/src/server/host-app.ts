/**
 * What the console plugin needs from the app that registers it (apps/services/api): Postgres as `db`, the
 * key check as `authenticate`, and `request.userId`. Declared here with the very types the API
 * declares (TypeScript merges identical declarations), so this package type-checks on its own and
 * the API's build sees one consistent Fastify. `tags`, `summary` and `hide` are @fastify/swagger's
 * route-schema fields, with its types.
 */
import type { FastifyReply } from 'fastify';
import type { Pool } from '@trawl/store';

declare module 'fastify' {
  interface FastifyInstance {
    db: Pool;
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
  interface FastifyRequest {
    /** The API key's owner; set by `authenticate`. */
    userId: string;
  }
  interface FastifySchema {
    hide?: boolean;
    tags?: readonly string[];
    summary?: string;
  }
}

export {};
