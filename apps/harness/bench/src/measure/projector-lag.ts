/**
 * How far each projector is behind the pipeline's event topics (jobs, pages, items), in events.
 *
 * projector-pg keeps its position in Postgres (`stream_offsets`, written in the same transaction
 * as its rows), so its lag is exact: high watermark minus the stored next offset, summed over
 * partitions. Any other projector (projector-ch) is measured by its Kafka consumer group's
 * committed offsets, found by asking which groups hold offsets on this pipeline's topics; a group
 * commits once a second while events flow and 100 ms after its consumer went idle, so that lag
 * reads up to a commit interval high while a crawl runs and ~0.1 s late at its end.
 */
import type { AppName, Pipeline } from '@trawl/e2e';

type Admin = ReturnType<Pipeline['kafka']['admin']>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Projections in `stream_offsets` that are not projectors. */
const NOT_PROJECTORS = new Set(['frontier']);

export class ProjectorLag {
  private admin: Admin | undefined;
  private chGroups: string[] | undefined;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly measured: AppName[],
  ) {}

  get projectors(): readonly AppName[] {
    return this.measured;
  }

  /** Stops measuring a projector (it died); true if it was measured. */
  drop(app: AppName): boolean {
    const i = this.measured.indexOf(app);
    if (i < 0) return false;
    this.measured.splice(i, 1);
    return true;
  }

  private get topics(): string[] {
    return this.pipeline.topics.events;
  }

  private async connectedAdmin(): Promise<Admin> {
    if (!this.admin) {
      this.admin = this.pipeline.kafka.admin();
      await this.admin.connect();
    }
    return this.admin;
  }

  private async highWatermarks(): Promise<Map<string, bigint>> {
    const admin = await this.connectedAdmin();
    const out = new Map<string, bigint>();
    for (const topic of this.topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) out.set(`${topic}:${p.partition}`, BigInt(p.high));
    }
    return out;
  }

  /** Events not yet applied, per projector. */
  async measure(): Promise<Record<string, number>> {
    const high = await this.highWatermarks();
    const out: Record<string, number> = {};
    for (const app of this.measured) {
      out[app] = app === 'projector-pg' ? await this.pgLag(high) : await this.groupLag(high);
    }
    return out;
  }

  /** Polls until every projector has applied everything; returns when (epoch ms). */
  async waitCaughtUp(timeoutMs: number): Promise<number> {
    if (this.measured.length === 0) return Date.now();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lag = await this.measure();
      // NaN: a projector whose position cannot be found (no group offsets); reported as unknown.
      if (Object.values(lag).every((n) => n === 0 || Number.isNaN(n))) return Date.now();
      if (Date.now() > deadline) throw new Error(`projectors still behind after ${timeoutMs} ms: ${JSON.stringify(lag)}`);
      await sleep(50);
    }
  }

  private async pgLag(high: Map<string, bigint>): Promise<number> {
    const { rows } = await this.pipeline.db.pool.query<{ projection: string; topic: string; partition: number; next_offset: string }>(
      'SELECT projection, topic, partition, next_offset FROM stream_offsets WHERE topic = ANY($1)',
      [this.topics],
    );
    const stored = new Map<string, bigint>();
    for (const r of rows) if (!NOT_PROJECTORS.has(r.projection)) stored.set(`${r.topic}:${r.partition}`, BigInt(r.next_offset));
    let lag = 0n;
    for (const [tp, hw] of high) lag += hw > (stored.get(tp) ?? 0n) ? hw - (stored.get(tp) ?? 0n) : 0n;
    return Number(lag);
  }

  private async groupLag(high: Map<string, bigint>): Promise<number> {
    const admin = await this.connectedAdmin();
    // Until the projector's first commit its group holds no offsets: keep looking until then.
    if (!this.chGroups?.length) this.chGroups = await this.findGroups(admin);
    if (this.chGroups.length === 0) return Number.NaN;
    let lag = 0n;
    for (const groupId of this.chGroups) {
      for (const t of await admin.fetchOffsets({ groupId, topics: this.topics })) {
        for (const p of t.partitions) {
          const hw = high.get(`${t.topic}:${p.partition}`) ?? 0n;
          const committed = BigInt(p.offset) < 0n ? 0n : BigInt(p.offset);
          if (hw > committed) lag += hw - committed;
        }
      }
    }
    return Number(lag);
  }

  /** Groups other than the frontier's and the workers' that committed offsets on our topics. */
  private async findGroups(admin: Admin): Promise<string[]> {
    const { groups } = await admin.listGroups();
    const found: string[] = [];
    for (const { groupId } of groups) {
      if (!/(^|[-._])(ch|clickhouse)([-._]|$)/i.test(groupId)) continue;
      const offsets = await admin.fetchOffsets({ groupId, topics: this.topics });
      if (offsets.some((t) => t.partitions.some((p) => BigInt(p.offset) >= 0n))) found.push(groupId);
    }
    return found;
  }

  async close(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
  }
}
