/**
 * A network namespace for one service process, and faults on its links (issue 36, item 4).
 *
 * Design, and why: the stack's parts (brokers, registry, Postgres, S3) listen on, and the brokers
 * advertise, 127.0.0.1 addresses, and the test site does too. A process in a namespace of its own
 * has a loopback of its own, so those addresses reach nothing there. Rather than reconfiguring
 * the shared brokers with an extra listener (a restart of someone else's stack) or rewriting
 * addresses with NAT rules (a firewall change in the host's namespace, and a userland the machine
 * may not have), every port the process needs is carried by two small TCP relays:
 *
 *   process ─▶ 127.0.0.1:<port> (relay in the namespace) ─▶ veth ─▶ 10.231.n.1:<any> (relay in
 *   this test process) ─▶ 127.0.0.1:<port> (the real part)
 *
 * so the process sees the real addresses (the brokers' advertised ones included) and every byte
 * it exchanges with them crosses a veth pair the test owns. There are two pairs: `faulty` carries
 * the ports under test (the brokers, or Postgres), `clean` the rest (registry, S3, the site), so a
 * fault hits only the path the scenario names. Addresses are 10.231.n.0/30, assigned only inside
 * the namespace and to the host end of veths this module creates, and removed with them.
 *
 * Faults: a full partition is made in the kernel, a blackhole route to the peer on both ends of
 * the faulty pair (packets silently dropped, as a cut cable or a dead switch does: TCP retransmits
 * and connects time out; nothing is refused). Delay, jitter and loss use `tc qdisc … netem` on
 * both ends when the kernel has sch_netem; a kernel built without it (as this project's
 * CI machine is) gets the same figures applied by the host-side relay instead, per chunk in each
 * direction, order kept, a "lost" chunk held back one retransmission timeout more (what TCP does
 * to a lost segment): `impairment` says which was used, and the scenario reports it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** `ip` or `tc` with the arguments; throws with its stderr. */
async function sh(cmd: 'ip' | 'tc', args: readonly string[]): Promise<string> {
  try {
    return (await run(cmd, args, { timeout: 15_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')}: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}

/**
 * Null when this process may make network namespaces (root or CAP_NET_ADMIN, and `ip` present);
 * otherwise why not, for the skip message.
 */
export async function netnsDenied(): Promise<string | null> {
  const probe = `trawl-probe-${randomBytes(3).toString('hex')}`;
  try {
    await sh('ip', ['netns', 'add', probe]);
  } catch (err) {
    return `ip netns is not allowed here (${(err as Error).message}); it needs root or CAP_NET_ADMIN and iproute2`;
  }
  await sh('ip', ['netns', 'del', probe]).catch(() => undefined);
  return null;
}

export interface Impairment {
  readonly delayMs: number;
  readonly jitterMs: number;
  readonly lossPercent: number;
}

/** A host-side relay: listens on the veth's host address, forwards to 127.0.0.1:<target>. */
interface HostRelay {
  readonly server: Server;
  readonly port: number;
  readonly target: number;
  readonly sockets: Set<Socket>;
}

/** The retransmission timeout a TCP sender waits before resending a lost segment on this path (≈ srtt + 4·rttvar). */
const rtoMs = (i: Impairment) => Math.max(200, 2 * i.delayMs + 4 * i.jitterMs);

export class Netns {
  private relayProcess: ChildProcess | undefined;
  private readonly hostRelays: HostRelay[] = [];
  /** The impairment the host relays apply (when the kernel has no netem), per link. */
  private readonly relayImpairment: { faulty: Impairment | null } = { faulty: null };
  private partitioned = false;
  /** Chunks the host relays carried across the faulty link while impaired, and those held back as lost. */
  readonly impaired = { chunks: 0, lost: 0 };
  impairment: 'tc netem' | 'relay (this kernel has no sch_netem)' | null = null;

  private constructor(
    readonly name: string,
    /** 10.231.<n>.0/30 for the faulty link, 10.231.<n+1>.0/30 for the clean one. */
    private readonly subnet: number,
    private readonly veths: { readonly faulty: [string, string]; readonly clean: [string, string] },
  ) {}

  private hostAddr(link: 'faulty' | 'clean') {
    return `10.231.${this.subnet + (link === 'faulty' ? 0 : 1)}.1`;
  }

  private nsAddr(link: 'faulty' | 'clean') {
    return `10.231.${this.subnet + (link === 'faulty' ? 0 : 1)}.2`;
  }

  /**
   * A namespace with two veth pairs, and relays for `faulty` ports (through the faulty pair) and
   * `clean` ports (through the other): inside, 127.0.0.1:<port> reaches the host's 127.0.0.1:<port>.
   */
  static async create(ports: { readonly faulty: readonly number[]; readonly clean: readonly number[] }): Promise<Netns> {
    const id = randomBytes(3).toString('hex');
    // Two /30s in 10.231.0.0/16 that no interface of this host uses yet.
    const used = await sh('ip', ['-o', '-4', 'addr', 'show']);
    let subnet = 0;
    for (let i = 0; i < 50; i++) {
      const n = 2 * Math.floor(Math.random() * 127);
      if (!used.includes(`10.231.${n}.`) && !used.includes(`10.231.${n + 1}.`)) {
        subnet = n;
        break;
      }
    }
    const ns = new Netns(`trawl-chaos-${id}`, subnet, { faulty: [`tf${id}h`, `tf${id}n`], clean: [`tc${id}h`, `tc${id}n`] });
    try {
      await sh('ip', ['netns', 'add', ns.name]);
      await sh('ip', ['-n', ns.name, 'link', 'set', 'lo', 'up']);
      for (const link of ['faulty', 'clean'] as const) {
        const [host, inside] = ns.veths[link];
        await sh('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', inside, 'netns', ns.name]);
        await sh('ip', ['addr', 'add', `${ns.hostAddr(link)}/30`, 'dev', host]);
        await sh('ip', ['link', 'set', host, 'up']);
        await sh('ip', ['-n', ns.name, 'addr', 'add', `${ns.nsAddr(link)}/30`, 'dev', inside]);
        await sh('ip', ['-n', ns.name, 'link', 'set', inside, 'up']);
      }
      const routes: string[] = [];
      for (const link of ['faulty', 'clean'] as const) {
        for (const target of ports[link]) {
          const relay = await ns.hostRelay(link, target);
          routes.push(`${target}=${ns.hostAddr(link)}:${relay.port}`);
        }
      }
      await ns.startNamespaceRelay(routes);
      return ns;
    } catch (err) {
      await ns.close();
      throw err;
    }
  }

  /** A relay in this process on the link's host address, to 127.0.0.1:<target>, that applies `relayImpairment` on the faulty link. */
  private async hostRelay(link: 'faulty' | 'clean', target: number): Promise<HostRelay> {
    const sockets = new Set<Socket>();
    const server = createServer((down) => {
      const up = connect(target, '127.0.0.1');
      for (const s of [down, up]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      const pipe = (from: Socket, to: Socket) => {
        let last = 0;
        from.on('data', (chunk: Buffer) => {
          const i = link === 'faulty' ? this.relayImpairment.faulty : null;
          if (!i) {
            // Queued chunks first: order is kept when an impairment ends.
            if (last > Date.now()) setTimeout(() => to.write(chunk), last - Date.now());
            else to.write(chunk);
            return;
          }
          const jitter = (2 * Math.random() - 1) * i.jitterMs;
          const lost = Math.random() * 100 < i.lossPercent ? rtoMs(i) : 0;
          this.impaired.chunks++;
          if (lost) this.impaired.lost++;
          last = Math.max(last, Date.now() + i.delayMs + jitter + lost);
          setTimeout(() => to.write(chunk), last - Date.now());
        });
        from.on('end', () => setTimeout(() => to.end(), Math.max(0, last - Date.now())));
        from.on('close', () => setTimeout(() => to.destroy(), Math.max(0, last - Date.now()) + 50));
      };
      pipe(down, up);
      pipe(up, down);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, this.hostAddr(link), () => resolve());
    });
    const relay = { server, port: (server.address() as { port: number }).port, target, sockets };
    this.hostRelays.push(relay);
    return relay;
  }

  /**
   * The relay inside the namespace: a Node process (`ip netns exec`) listening on 127.0.0.1 of the
   * namespace for each port, forwarding to the host relay. It prints "ready" once listening.
   */
  private async startNamespaceRelay(routes: readonly string[]): Promise<void> {
    const code = `
      const net = require('node:net');
      const routes = process.argv.slice(1).map((r) => { const [p, t] = r.split('='); const [h, tp] = t.split(':'); return { port: Number(p), host: h, target: Number(tp) }; });
      let left = routes.length;
      for (const r of routes) {
        net.createServer((down) => {
          const up = net.connect(r.target, r.host);
          down.on('error', () => up.destroy()); up.on('error', () => down.destroy());
          down.on('close', () => up.destroy()); up.on('close', () => down.destroy());
          down.pipe(up); up.pipe(down);
        }).listen(r.port, '127.0.0.1', () => { if (--left === 0) console.log('ready'); });
      }`;
    const child = spawn('ip', ['netns', 'exec', this.name, process.execPath, '-e', code, ...routes], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.relayProcess = child;
    await new Promise<void>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`the namespace relay did not start: ${err}`)), 15_000);
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the namespace relay exited with ${code}: ${err}`));
      });
    });
  }

  /** The command prefix that runs a program inside the namespace. */
  get exec(): readonly string[] {
    return ['ip', 'netns', 'exec', this.name];
  }

  /** Delay, jitter and loss on the faulty link, both ways: netem where the kernel has it, else the host relay. */
  async impair(i: Impairment): Promise<void> {
    const netem = ['netem', 'delay', `${i.delayMs}ms`, `${i.jitterMs}ms`, 'loss', `${i.lossPercent}%`];
    const [host, inside] = this.veths.faulty;
    try {
      await sh('tc', ['qdisc', 'add', 'dev', host, 'root', ...netem]);
      await sh('tc', ['-n', this.name, 'qdisc', 'add', 'dev', inside, 'root', ...netem]);
      this.impairment = 'tc netem';
    } catch (err) {
      if (!/unknown/i.test((err as Error).message)) throw err;
      await sh('tc', ['qdisc', 'del', 'dev', host, 'root']).catch(() => undefined);
      this.relayImpairment.faulty = i;
      this.impairment = 'relay (this kernel has no sch_netem)';
    }
  }

  /** Ends the delay and loss. */
  async unimpair(): Promise<void> {
    this.relayImpairment.faulty = null;
    if (this.impairment === 'tc netem') {
      await sh('tc', ['qdisc', 'del', 'dev', this.veths.faulty[0], 'root']).catch(() => undefined);
      await sh('tc', ['-n', this.name, 'qdisc', 'del', 'dev', this.veths.faulty[1], 'root']).catch(() => undefined);
    }
  }

  /** Every packet on the faulty link dropped, both ways, in the kernel. */
  async partition(): Promise<void> {
    await sh('ip', ['route', 'add', 'blackhole', `${this.nsAddr('faulty')}/32`]);
    await sh('ip', ['-n', this.name, 'route', 'add', 'blackhole', `${this.hostAddr('faulty')}/32`]);
    this.partitioned = true;
  }

  async heal(): Promise<void> {
    await sh('ip', ['route', 'del', 'blackhole', `${this.nsAddr('faulty')}/32`]).catch(() => undefined);
    await sh('ip', ['-n', this.name, 'route', 'del', 'blackhole', `${this.hostAddr('faulty')}/32`]).catch(() => undefined);
    this.partitioned = false;
  }

  /**
   * Whether a TCP connection from inside the namespace across the faulty link opens within
   * `timeoutMs` (to the first host relay on it): false while partitioned, true otherwise.
   */
  async faultyLinkOpen(timeoutMs = 2_000): Promise<boolean> {
    const relay = this.hostRelays.find((r) => r.server.address() && (r.server.address() as { address: string }).address === this.hostAddr('faulty'));
    if (!relay) throw new Error('no relay on the faulty link');
    const code = `const s = require('node:net').connect(${relay.port}, '${this.hostAddr('faulty')}');
      const t = setTimeout(() => { console.log('closed'); process.exit(0); }, ${timeoutMs});
      s.on('connect', () => { console.log('open'); process.exit(0); }); s.on('error', () => { console.log('closed'); process.exit(0); });`;
    const { stdout } = await run('ip', ['netns', 'exec', this.name, process.execPath, '-e', code], { timeout: timeoutMs + 10_000 });
    return stdout.trim() === 'open';
  }

  /** Relays stopped, veths and namespace deleted (deleting one end of a veth deletes its peer). */
  async close(): Promise<void> {
    if (this.partitioned) await this.heal();
    this.relayProcess?.kill('SIGKILL');
    for (const r of this.hostRelays) {
      for (const s of r.sockets) s.destroy();
      await new Promise<void>((resolve) => r.server.close(() => resolve()));
    }
    for (const [host] of [this.veths.faulty, this.veths.clean]) await sh('ip', ['link', 'del', host]).catch(() => undefined);
    await sh('ip', ['netns', 'del', this.name]).catch(() => undefined);
  }
}
