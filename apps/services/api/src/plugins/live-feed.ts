/**
 * Wires the live feed hub to Kafka (through streams' live subscription). The subscription starts
 * with the app and is retried in the background when Kafka is not there yet, so the API serves
 * everything else meanwhile; the WebSocket route answers FEED_UNAVAILABLE until it is ready.
 */
import fp from 'fastify-plugin';
import { jobOwner } from '../data/jobs.ts';
import { FEED_TOPICS, type LiveSubscribe } from '../feed/feed-event.ts';
import { LiveFeed } from '../feed/live-feed.ts';
import { PageWaiters } from '../scrape/page-waiters.ts';

export interface LiveFeedState {
  readonly hub: LiveFeed;
  /** `POST /scrape` and `POST /map` waiting for their job's page (scrape/page-waiters.ts). */
  readonly waiters: PageWaiters;
  /** True once the subscription has its partitions. */
  readonly connected: boolean;
  /** Resolves when connected (never, without a subscription). */
  readonly ready: Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    liveFeed: LiveFeedState;
  }
}

/** The longest the feed works through a fetched batch before it lets the rest of the server run. */
const FEED_SLICE_MS = 10;

/**
 * Gives the event loop back every FEED_SLICE_MS of fan-out. The subscription awaits the handler
 * message after message, but an already-settled await never leaves the microtask queue: a fetched
 * batch of a thousand events for two hundred sockets ran as one block, and every other request
 * (health checks, crawls, SSE) waited behind it — over a second under load (test/load.test.ts).
 * Yielding with setImmediate keeps the order (the next event is still handled after this one).
 */
let sliceStarted = performance.now();
async function yieldNowAndThen(): Promise<void> {
  if (performance.now() - sliceStarted < FEED_SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  sliceStarted = performance.now();
}

export interface LiveFeedPluginOptions {
  readonly subscribe?: LiveSubscribe;
}

export default fp<LiveFeedPluginOptions>(
  async (fastify, { subscribe }) => {
    const hub = new LiveFeed({ lookupOwner: (jobId) => jobOwner(fastify.db, jobId), logger: fastify.log });
    let resolveReady!: () => void;
    const state = {
      hub,
      waiters: new PageWaiters(),
      connected: false,
      ready: new Promise<void>((r) => (resolveReady = r)),
    };
    fastify.decorate('liveFeed', state);
    if (!subscribe) return;

    let stopped = false;
    let subscription: Awaited<ReturnType<LiveSubscribe>> | undefined;
    let retry: NodeJS.Timeout | undefined;
    const start = async (attempt: number): Promise<void> => {
      try {
        subscription = await subscribe({
          topics: FEED_TOPICS,
          onEvent: async (event) => {
            state.waiters.handle(event);
            await hub.handle(event);
            await yieldNowAndThen();
          },
        });
        if (stopped) return void (await subscription.stop());
        await subscription.ready;
        state.connected = true;
        resolveReady();
        fastify.log.info('live feed connected');
      } catch (err) {
        if (stopped) return;
        const delay = Math.min(30_000, 500 * 2 ** attempt);
        fastify.log.warn({ err, retryInMs: delay }, 'live feed could not subscribe; retrying');
        retry = setTimeout(() => void start(attempt + 1), delay);
      }
    };
    fastify.addHook('onReady', async () => {
      void start(0);
    });
    fastify.addHook('onClose', async () => {
      stopped = true;
      clearTimeout(retry);
      state.connected = false;
      await subscription?.stop();
    });
  },
  { name: 'live-feed', dependencies: ['dependencies'], fastify: '5.x' },
);
