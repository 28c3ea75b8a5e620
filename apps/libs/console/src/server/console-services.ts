/**
 * What the console's routes need from outside — ClickHouse, Kafka, the schema registry, a
 * producer — created lazily from the environment (the same endpoints every service reads), so
 * that registering the plugin connects to nothing: an API whose console is never opened never
 * talks to ClickHouse. Tests hand in their own.
 */
import {
  createKafka,
  endpoints,
  EventCodec,
  EventProducer,
  topicCatalogue,
  type Logger,
  type RawMessage,
} from '@trawl/streams';
import type { ClickHouse } from '@trawl/clickhouse';
import { dashboardReader } from './clickhouse/dashboard-reader.ts';

export type Kafka = ReturnType<typeof createKafka>;

export interface ConsoleOptions {
  /** ClickHouse with the analytics tables; default: CLICKHOUSE_READ_URL (the read-only user) / CLICKHOUSE_DATABASE. */
  readonly clickhouse?: { readonly url: string; readonly database: string };
  readonly kafka?: Kafka;
  readonly codec?: EventCodec;
  /** Sends re-driven messages; default: the API's producer when it can send raw bytes, else one of our own. */
  readonly producer?: { sendRaw(message: RawMessage): Promise<void> };
  /** Where a re-drive may write; default: the catalogue's event and command topics. */
  readonly redriveTopics?: readonly string[];
  /** Topics whose consumer lag is shown; default: the catalogue's. */
  readonly lagTopics?: readonly string[];
  /** Where the built bundle lives (tests build into a temporary folder). */
  readonly distDir?: string;
}

export class ConsoleServices {
  private kafkaClient: Kafka | undefined;
  private codecInstance: EventCodec | undefined;
  private chReader: ClickHouse | undefined;
  private ownProducer: EventProducer | undefined;
  private ownProducerReady: Promise<void> | undefined;

  constructor(
    private readonly options: ConsoleOptions,
    private readonly logger: Logger,
    /** The API's producer, if it has one that can forward raw bytes. */
    private readonly apiProducer: { sendRaw?: (m: RawMessage) => Promise<void> } | undefined,
  ) {}

  kafka(): Kafka {
    this.kafkaClient ??= this.options.kafka ?? createKafka({ clientId: 'trawl-console', logger: this.logger });
    return this.kafkaClient;
  }

  codec(): EventCodec {
    this.codecInstance ??= this.options.codec ?? new EventCodec();
    return this.codecInstance;
  }

  clickhouse(): ClickHouse {
    if (!this.chReader) {
      const ep = this.options.clickhouse ?? { url: endpoints().clickhouseReadUrl, database: endpoints().clickhouseDatabase };
      this.chReader = dashboardReader(ep);
    }
    return this.chReader;
  }

  async sendRaw(message: RawMessage): Promise<void> {
    if (this.options.producer) return this.options.producer.sendRaw(message);
    if (typeof this.apiProducer?.sendRaw === 'function') return this.apiProducer.sendRaw(message);
    if (!this.ownProducer) {
      this.ownProducer = new EventProducer({ kafka: this.kafka(), logger: this.logger, codec: this.codec() });
      this.ownProducerReady = this.ownProducer.connect();
    }
    await this.ownProducerReady;
    return this.ownProducer.sendRaw(message);
  }

  get redriveTopics(): ReadonlySet<string> {
    return new Set(this.options.redriveTopics ?? topicCatalogue().filter((t) => t.role === 'event' || t.role === 'command').map((t) => t.name));
  }

  get lagTopics(): readonly string[] {
    return this.options.lagTopics ?? topicCatalogue().filter((t) => t.role !== 'dead-letter').map((t) => t.name);
  }

  async close(): Promise<void> {
    await this.ownProducer?.disconnect().catch(() => undefined);
    await this.chReader?.close().catch(() => undefined);
  }
}
