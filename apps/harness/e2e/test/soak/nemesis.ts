/**
 * The nemesis: every 30–90 s it picks a fault with a seeded generator (the same seed gives the same
 * kinds, targets and pauses in the same order), injects it, heals it and measures how long the
 * faulted part takes to answer again. Faults:
 *
 * - `kill-service`: SIGKILL of a service process, started again 1–8 s later (as a keeper would);
 * - `kill-broker`: SIGKILL of a Kafka node, `stack up` 3–15 s later restarts it;
 * - `pause`: SIGSTOP of a service or broker for 5–20 s, then SIGCONT (a GC pause, a frozen VM);
 * - `restart-postgres`, `restart-clickhouse`, `restart-registry`: the part stopped the way `stack
 *   down` stops it (Postgres's fast shutdown, SIGTERM for the others) and started again by `up`:
 *   prepared statements, temporary tables, open connections and in-flight inserts are lost.
 *
 * A fault is healed before the next one is picked, so at most one part is down at a time. The
 * network faults of test/chaos (namespaces, netem) are not used: the soak must run without the
 * privileges they need.
 */
import { clickhouseDown, postgresDown, registryDown } from '@trawl/stack';
import type { Kafka } from 'kafkajs';
import type { OwnStack } from './own-stack.ts';
import { SLOTS, type Services, type Slot } from './services.ts';
import { prng } from '@trawl/streams/testing';

export const FAULT_KINDS = ['kill-service', 'kill-broker', 'pause', 'restart-postgres', 'restart-clickhouse', 'restart-registry'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each kind is picked (relative). */
const WEIGHTS: Readonly<Record<FaultKind, number>> = {
  'kill-service': 4,
  'kill-broker': 2,
  pause: 2,
  'restart-postgres': 1,
  'restart-clickhouse': 1,
  'restart-registry': 1,
};

/** The soak's generator: streams' mulberry32, whose whole state is one 32-bit number (the seed). */
export const seededRandom = prng;

export interface Fault {
  readonly kind: FaultKind;
  /** `worker-1`, `kafka-2`, `postgres`…  */
  readonly target: string;
  /**
   * Epoch ms: injected; the heal begun (the process started again, SIGCONT, `stack up` called);
   * healed (the heal returned: `up` waits for its part); and answering again.
   */
  readonly injectedAt: number;
  healStartedAt?: number;
  healedAt?: number;
  recoveredAt?: number;
  /** Heal begun → answering again; null when it did not within the limit. */
  recoveryMs?: number | null;
  /** Injected → answering again: how long the part was out. */
  outageMs?: number | null;
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return true;
    await sleep(250);
  }
  return false;
}

export interface NemesisParts {
  readonly stack: OwnStack;
  readonly services: Services;
  /** A client of the soak's cluster: the brokers' health after a broker fault. */
  readonly kafka: Kafka;
  /** Topics whose every partition must be back in full sync after a broker fault. */
  readonly topics: readonly string[];
  /** `SELECT 1` on the soak's Postgres / ClickHouse, and the registry answering with its password. */
  readonly probes: { readonly postgres: () => Promise<boolean>; readonly clickhouse: () => Promise<boolean>; readonly registry: () => Promise<boolean> };
  readonly log: (line: string) => void;
}

const RECOVERY_LIMIT_MS = 180_000;

export class Nemesis {
  readonly faults: Fault[] = [];
  private readonly random: () => number;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    readonly seed: number,
    private readonly parts: NemesisParts,
    /** The kinds to pick from (`--faults`); default every kind. */
    private readonly kinds: readonly FaultKind[] = FAULT_KINDS,
  ) {
    this.random = seededRandom(seed);
  }

  private between(lo: number, hi: number): number {
    return Math.round(lo + this.random() * (hi - lo));
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)]!;
  }

  private pickKind(): FaultKind {
    const total = this.kinds.reduce((s, k) => s + WEIGHTS[k], 0);
    let r = this.random() * total;
    for (const k of this.kinds) {
      r -= WEIGHTS[k];
      if (r < 0) return k;
    }
    return this.kinds[0]!;
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        const wait = this.between(30_000, 90_000);
        const deadline = Date.now() + wait;
        while (!this.stopped && Date.now() < deadline) await sleep(Math.min(1_000, deadline - Date.now()));
        if (this.stopped) break;
        await this.inject(this.pickKind());
      }
    })();
  }

  /** Stops picking faults; resolves once the fault under way (if any) is healed. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async inject(kind: FaultKind): Promise<void> {
    const { stack, log } = this.parts;
    const brokerNames = stack.nodes().map((n) => `kafka-${n.id}`);
    const target = kind === 'kill-service' ? this.pick(SLOTS)
      : kind === 'kill-broker' ? this.pick(brokerNames)
        : kind === 'pause' ? this.pick([...SLOTS, ...brokerNames])
          : kind.replace('restart-', '');
    // Drawn now, whatever happens next, so that a seed replays the same sequence.
    const downMs = kind === 'kill-service' ? this.between(1_000, 8_000) : kind === 'kill-broker' ? this.between(3_000, 15_000) : kind === 'pause' ? this.between(5_000, 20_000) : 0;
    const fault: Fault = { kind, target, injectedAt: Date.now() };
    this.faults.push(fault);
    log(`nemesis: ${kind} ${target}${downMs ? ` for ${(downMs / 1_000).toFixed(0)} s` : ''}`);
    try {
      const ready = await this.act(kind, target, downMs, () => (fault.healStartedAt = Date.now()));
      fault.healedAt = Date.now();
      fault.healStartedAt ??= fault.healedAt;
      const ok = await until(ready, RECOVERY_LIMIT_MS);
      fault.recoveredAt = Date.now();
      fault.recoveryMs = ok ? fault.recoveredAt - fault.healStartedAt : null;
      fault.outageMs = ok ? fault.recoveredAt - fault.injectedAt : null;
      log(`nemesis: ${kind} ${target} healed, ${ok ? `answering ${((fault.recoveryMs ?? 0) / 1_000).toFixed(1)} s later` : `NOT answering after ${RECOVERY_LIMIT_MS / 1_000} s`}`);
    } catch (err) {
      fault.error = (err as Error).message;
      fault.healedAt ??= Date.now();
      fault.recoveryMs = null;
      fault.outageMs = null;
      log(`nemesis: ${kind} ${target} could not be healed: ${fault.error}`);
    }
  }

  /** Injects and heals the fault; returns the probe of "answering again". */
  private async act(kind: FaultKind, target: string, downMs: number, healing: () => void): Promise<() => Promise<boolean>> {
    const { stack, services, probes } = this.parts;
    const brokersHealthy = () => this.brokersHealthy();
    switch (kind) {
      case 'kill-service': {
        const slot = target as Slot;
        await services.kill(slot);
        await sleep(downMs);
        healing();
        services.respawn(slot);
        return () => services.ready(slot);
      }
      case 'kill-broker': {
        const node = stack.nodes().find((n) => `kafka-${n.id}` === target);
        if (node?.pid) process.kill(node.pid, 'SIGKILL');
        await sleep(downMs);
        healing();
        await stack.up();
        return brokersHealthy;
      }
      case 'pause': {
        const pid = target.startsWith('kafka-') ? stack.nodes().find((n) => `kafka-${n.id}` === target)?.pid : services.pid(target as Slot);
        if (!pid) throw new Error(`${target} has no process to pause`);
        process.kill(pid, 'SIGSTOP');
        try {
          await sleep(downMs);
        } finally {
          healing();
          process.kill(pid, 'SIGCONT');
        }
        return target.startsWith('kafka-') ? brokersHealthy : () => services.ready(target as Slot);
      }
      case 'restart-postgres':
        await postgresDown(stack.context());
        healing();
        await stack.up();
        return probes.postgres;
      case 'restart-clickhouse':
        await clickhouseDown(stack.context());
        healing();
        await stack.up();
        return probes.clickhouse;
      case 'restart-registry':
        await registryDown(stack.context());
        healing();
        await stack.up();
        return probes.registry;
    }
  }

  /** Every broker registered, every partition of the soak's topics with a leader and all its replicas in sync. */
  private async brokersHealthy(): Promise<boolean> {
    const admin = this.parts.kafka.admin();
    await admin.connect();
    try {
      const { brokers } = await admin.describeCluster();
      if (brokers.length < this.parts.stack.brokers) return false;
      const { topics } = await admin.fetchTopicMetadata({ topics: [...this.parts.topics] });
      return topics.every((t) => t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length));
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
}
