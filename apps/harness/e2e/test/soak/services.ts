/**
 * Every Trawl service of the soak as a child process of one Pipeline (its own topics and database
 * on the soak's own stack), each in a named slot, kept as `trawl up`'s keepers keep them: a child
 * that exits without the nemesis having killed it is started again a second later, and counted
 * (an unplanned exit is a finding to read in its log, not a violation: production restarts it the
 * same way). The nemesis takes a slot down with `kill` and gives it back with `respawn`.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AppName, Child, Pipeline } from '../../src/index.ts';
import { freePort } from '../../src/index.ts';

export const SLOTS = ['dispatcher', 'frontier', 'worker-1', 'worker-2', 'projector-pg', 'projector-ch', 'api'] as const;
export type Slot = (typeof SLOTS)[number];

const appOf = (slot: Slot): AppName => (slot.startsWith('worker-') ? 'worker' : (slot as AppName));

export interface UnplannedExit {
  readonly slot: Slot;
  readonly code: number | null;
  readonly signal: string | null;
  readonly at: number;
  readonly logFile: string;
  readonly tail: string;
}

export class Services {
  private readonly current = new Map<Slot, Child>();
  /** Slots the nemesis holds down: the keeper leaves them alone until `respawn`. */
  private readonly held = new Set<Slot>();
  readonly unplanned: UnplannedExit[] = [];
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly p: Pipeline,
    readonly apiBase: string,
    private readonly apiEnv: Readonly<Record<string, string>>,
  ) {}

  static async start(p: Pipeline): Promise<Services> {
    const port = await freePort();
    const s = new Services(p, `http://127.0.0.1:${port}`, { TRAWL_API_HOST: '127.0.0.1', TRAWL_API_PORT: String(port) });
    for (const slot of SLOTS) s.spawn(slot);
    s.timer = setInterval(() => s.keep(), 1_000);
    return s;
  }

  private spawn(slot: Slot): Child {
    const child = this.p.spawn(appOf(slot), slot === 'api' ? this.apiEnv : {});
    this.current.set(slot, child);
    return child;
  }

  child(slot: Slot): Child {
    return this.current.get(slot)!;
  }

  pid(slot: Slot): number | undefined {
    return this.current.get(slot)?.process.pid;
  }

  /** The keeper: restarts a child that exited on its own. */
  private keep(): void {
    for (const [slot, c] of this.current) {
      if (this.held.has(slot)) continue;
      const exited = c.process.exitCode !== null || c.process.signalCode !== null;
      if (!exited) continue;
      const tail = existsSync(c.logFile) ? readFileSync(c.logFile, 'utf8').trimEnd().split('\n').slice(-8).join('\n') : '';
      this.unplanned.push({ slot, code: c.process.exitCode, signal: c.process.signalCode, at: Date.now(), logFile: c.logFile, tail });
      this.spawn(slot);
    }
  }

  /** SIGKILL, and hold the slot down until `respawn`. */
  async kill(slot: Slot): Promise<void> {
    this.held.add(slot);
    const c = this.current.get(slot)!;
    if (c.process.exitCode === null && c.process.signalCode === null) await this.p.kill(c);
  }

  respawn(slot: Slot): Child {
    const c = this.spawn(slot);
    this.held.delete(slot);
    return c;
  }

  /** Whether the slot's process answers `/readyz` on its operator port (the API: also its `/healthz`). */
  async ready(slot: Slot): Promise<boolean> {
    const c = this.current.get(slot);
    if (!c?.operatorUrl) return false;
    const ok = (url: string) => fetch(url, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok).catch(() => false);
    if (!(await ok(`${c.operatorUrl}/readyz`))) return false;
    return slot === 'api' ? ok(`${this.apiBase}/healthz`) : true;
  }

  stopKeeping(): void {
    clearInterval(this.timer);
  }
}
