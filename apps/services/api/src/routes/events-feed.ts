/**
 * `GET /events` (WebSocket): the caller's events as they happen, as JSON text messages:
 * first `{"type":"hello",...}`, then `{"type":"event","event":"PageFetched","job_id":...,"data":{...}}`
 * per event, and `{"type":"dropped","count":n}` when the client was too slow to get some (see
 * feed-client.ts for the policy). Filters: `job_id` (comma list) and `types` (comma list of event
 * names). A `job_id` that is not the caller's answers 404 before the upgrade. A feed whose key is
 * revoked is closed with code 4401 and reason `key_revoked` as soon as the API hears of it (a
 * Postgres notification; at the latest the key index's next resync), through `fastify.watchKey`;
 * it gets no event after the revocation is seen.
 */
import type { FastifyPluginAsync } from 'fastify';
import { ownedJobIds } from '../data/jobs.ts';
import { ApiError, notFound } from '../errors.ts';
import { CLOSE_KEY_REVOKED, FeedClient } from '../feed/feed-client.ts';
import { FEED_EVENT_NAMES } from '../feed/feed-event.ts';
import { errorResponses } from '../schemas/common.ts';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const NAMES = FEED_EVENT_NAMES.join('|');
const PING_MS = 30_000;
/** A client that does not answer our close within this is cut, so that its stream slot comes back. */
const CLOSE_GRACE_MS = 2_000;

interface FeedQuery {
  job_id?: string;
  types?: string;
  access_token?: string;
}

function list(value: string | undefined): string[] | null {
  return value === undefined ? null : [...new Set(value.split(',').map((s) => s.trim()))];
}

const eventsFeedRoutes: FastifyPluginAsync = async (fastify) => {
  // `handler` + `wsHandler` (rather than `websocket: true`, which hides the route) keeps the feed
  // in the OpenAPI document; a plain GET without the upgrade gets 426.
  fastify.route<{ Querystring: FeedQuery }>({
      method: 'GET',
      url: '/events',
      config: { allowQueryToken: true },
      schema: {
        tags: ['live'],
        summary: 'WebSocket live feed of the caller\'s events (upgrade required)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            job_id: { type: 'string', pattern: `^${UUID}(,${UUID}){0,99}$`, description: 'comma list of job ids' },
            types: { type: 'string', pattern: `^(${NAMES})(,(${NAMES}))*$`, description: `comma list of: ${FEED_EVENT_NAMES.join(', ')}` },
            access_token: { type: 'string', description: 'the API key, for browsers (they cannot set headers on a WebSocket)' },
          },
        },
        response: {
          101: { description: 'Switching Protocols: JSON text messages follow (hello, event, dropped)', type: 'null' },
          ...errorResponses('JOB_NOT_FOUND', 'FEED_UNAVAILABLE', 'UPGRADE_REQUIRED', 'TOO_MANY_STREAMS'),
        },
      },
      preHandler: async (request) => {
        if (!fastify.liveFeed.connected) throw new ApiError('FEED_UNAVAILABLE', 'the live feed is not connected to Kafka yet; retry shortly');
        // A plain GET is answered 426 by the handler, without looking anything up.
        if (!request.ws) return;
        // The slot is taken before the upgrade (and before the job check: a user at the cap costs no
        // query), so that the refusal is an HTTP 429, and given back when the connection closes,
        // however it ends (handshake failed, client gone, terminated).
        const release = fastify.limits.stream(request.userId);
        request.raw.socket.once('close', release);
        // Up to 100 job ids, checked in one query.
        const asked = list(request.query.job_id) ?? [];
        if (asked.length === 0) return;
        const owned = await ownedJobIds(fastify.db, asked, request.userId);
        const missing = asked.find((id) => !owned.has(id));
        if (missing !== undefined) throw notFound('JOB_NOT_FOUND', missing);
      },
      handler: async () => {
        throw new ApiError('UPGRADE_REQUIRED', 'GET /events is a WebSocket: send "Upgrade: websocket"');
      },
      wsHandler: (socket, request) => {
      const jobIds = list(request.query.job_id);
      const names = list(request.query.types);
      const client = new FeedClient(
        request.userId,
        { jobIds: jobIds && new Set(jobIds), names: names && new Set(names) },
        socket,
        {
          highWaterBytes: fastify.config.feedHighWaterBytes,
          slowCloseMs: fastify.config.feedSlowCloseMs,
          onOutcome: (outcome) => fastify.metrics.feedEvents.inc({ outcome }),
        },
      );
      const remove = fastify.liveFeed.hub.add(client);
      fastify.metrics.feedClients.inc();
      // Dead peers (no pong to the previous ping) are cut, so they do not pile up.
      let alive = true;
      socket.on('pong', () => (alive = true));
      const ping = setInterval(() => {
        if (!alive) return socket.terminate();
        alive = false;
        socket.ping();
      }, PING_MS);
      const unwatch = fastify.watchKey(request, () => {
        // No event after the revocation is seen, whether or not the client answers the close.
        remove();
        socket.close(CLOSE_KEY_REVOKED, 'key_revoked');
        setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
      });
      socket.on('close', () => {
        clearInterval(ping);
        unwatch();
        remove();
        fastify.metrics.feedClients.dec();
      });
      // The feed is one-way; whatever a client sends is ignored.
      socket.on('message', () => undefined);
      socket.send(JSON.stringify({ type: 'hello', user_id: request.userId, job_ids: jobIds, types: names }));
    },
  });
};

export default eventsFeedRoutes;
