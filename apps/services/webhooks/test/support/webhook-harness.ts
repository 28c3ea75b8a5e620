/**
 * One webhooks service on the real stack for a test file: its own test topics (event topics, retry
 * tiers of the given delays, a dead-letter topic), its own database with the webhook tables and
 * projector-pg's read models, and a real receiver on loopback that verifies every signature.
 */
import { randomUUID } from 'node:crypto';
import { samples } from '@trawl/schemas';
import { EventCodec, EventProducer, type RetryTier } from '@trawl/streams';
import { createTestTopics, deleteSubjects, requireStack, testId, testKafka, testLogger, type TestTopics } from '@trawl/streams/testing';
import { migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { sealWebhookSecret, secretBoxFromEnv } from '@trawl/store/secrets';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';
import { startWebhookService, type WebhookService } from '../../src/index.ts';
import type { WebhookConfig } from '../../src/config.ts';
import { Receiver } from '../../src/testing/receiver.ts';

export interface DeliveryRow {
  type: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  event_id: string;
}

const { event_id: _a, occurred_at: _b, causation_id: _c, ...dispatched } = samples.JobDispatched;
const { event_id: _d, occurred_at: _e, causation_id: _f, ...completed } = samples.JobCompleted;

export class WebhookHarness {
  readonly codec = new EventCodec();
  readonly receiver = new Receiver();
  readonly kafka;
  readonly logger;
  topics!: TestTopics;
  tiers!: RetryTier[];
  producer!: EventProducer;
  db!: TestDatabase;
  service!: WebhookService;

  constructor(private readonly name: string, readonly delaysMs: readonly number[], private readonly config: WebhookConfig) {
    this.logger = testLogger(name);
    this.kafka = testKafka(name, this.logger);
  }

  async start(): Promise<void> {
    await requireStack({ kafka: true, registry: true, postgres: true });
    const tierNames = this.delaysMs.map((_, i) => `webhooks.retry.${i + 1}`);
    this.topics = await createTestTopics(this.kafka, ['jobs', 'items', 'pages', ...tierNames, 'webhooks.dlq'], { partitions: 2 });
    this.tiers = this.delaysMs.map((delayMs, i) => ({ topic: this.topics.names[tierNames[i]!]!, delayMs }));
    this.producer = new EventProducer({ kafka: this.kafka, logger: this.logger, codec: this.codec });
    await this.producer.connect();
    this.db = await createTestDatabase(`trawl_test_${this.name.replace(/-/g, '_')}`);
    await migrate(this.db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
    // projector-pg's read models, which change tracking compares runs in.
    await setupReadModels(this.db.pool);
    await this.receiver.start();
    // The receiver is on loopback: open its port (and only it), as `trawl up` opens the demo site's.
    process.env.TRAWL_FETCH_ALLOW = `127.0.0.1:${this.receiver.port}`;
    this.service = await startWebhookService({
      logger: this.logger,
      pool: this.db.pool,
      kafka: this.kafka,
      config: this.config,
      topics: { jobs: this.topics.names.jobs!, items: this.topics.names.items!, pages: this.topics.names.pages! },
      retryTiers: this.tiers,
      deadLetterTopic: this.topics.names['webhooks.dlq']!,
      groupId: testId(`g-${this.name}`),
    });
    await this.service.consumer.ready;
  }

  async stop(): Promise<void> {
    await this.service?.stop();
    await this.receiver.stop();
    await this.producer?.disconnect();
    await this.db?.drop();
    await this.topics?.delete();
    await deleteSubjects(this.topics?.prefix ?? 'never');
  }

  /**
   * A subscription of `user` delivering to the receiver's `path` (or to `filter.url`); its id. The
   * secret is stored sealed, as the API stores it, under the key the service opens it with.
   */
  async subscribe(user: string, path: string, events: readonly string[], filter: { job_id?: string; schedule_id?: string; url?: string } = {}): Promise<string> {
    const id = randomUUID();
    const secret = `secret-${randomUUID()}`;
    await this.db.pool.query('INSERT INTO webhooks (id, user_id, url, events, secret, job_id, schedule_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      id, user, filter.url ?? this.receiver.url(path, secret), events, sealWebhookSecret(secretBoxFromEnv(), id, secret), filter.job_id ?? null, filter.schedule_id ?? null,
    ]);
    return id;
  }

  /** JobDispatched of `jobId` for `user`; its event id. */
  started(jobId: string, user: string): Promise<string> {
    return this.producer.emit('JobDispatched', { ...dispatched, job_id: jobId, user_id: user, schedule_id: null }, { topic: this.topics.names.jobs! });
  }

  /** JobCompleted of `jobId`; its event id. */
  ended(jobId: string, outcome: 'finished' | 'cancelled' = 'finished'): Promise<string> {
    return this.producer.emit('JobCompleted', { ...completed, job_id: jobId, outcome }, { topic: this.topics.names.jobs! });
  }

  async rows(webhookId: string): Promise<DeliveryRow[]> {
    return (await this.db.pool.query<DeliveryRow>(
      'SELECT type, status, attempts, last_error, next_attempt_at, event_id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at', [webhookId],
    )).rows;
  }
}
