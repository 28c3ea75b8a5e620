import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { InvalidConfigError } from '../errors.ts';
import { AddressPolicy } from './address-policy.ts';
import type { AllowList } from './allow-list.ts';
import { describeExposures, stackExposures, type KnownAddresses, type StackExposure, type StackListener } from './stack-exposure.ts';

/**
 * The egress policy a process that fetches for tenants starts with (the worker, the webhook sender,
 * the API's webhook URL check, and `trawl up` before it starts them): `TRAWL_FETCH_ALLOW`, refused
 * when an entry opens a port of the stack itself — Postgres, ClickHouse, Kafka, the registry, S3,
 * the API, an operator port (stack-exposure.ts says which entry reaches which). Refused at start
 * rather than filtered at fetch time: an allow-list wider than meant is a configuration mistake the
 * operator must see, and one that is silently narrowed hides the next one.
 *
 * `TRAWL_FETCH_ALLOW_STACK=1` accepts such a list on purpose (a single-tenant machine, a test that
 * crawls the stack); the exposures then come back for the caller to log as a warning.
 */

/** The explicit opt-in: an allow-list may open the stack's own ports when this is `1` (or `true`). */
export const ALLOW_STACK_VARIABLE = 'TRAWL_FETCH_ALLOW_STACK';

export interface EgressGuardOptions {
  /** What a host name resolves to; the system resolver by default (a name that fails resolves to nothing). */
  readonly resolve?: (name: string) => Promise<readonly string[]>;
  /** This machine's addresses; `os.networkInterfaces()` by default. */
  readonly local?: readonly string[];
  /** How long a name may take to resolve. */
  readonly resolveTimeoutMs?: number;
}

export interface GuardedPolicy {
  readonly policy: AddressPolicy;
  /** What the list opens of the stack: empty, unless accepted with TRAWL_FETCH_ALLOW_STACK=1 (then log it). */
  readonly exposures: readonly StackExposure[];
}

/** Whether the environment accepts an allow-list that opens the stack. */
export function stackPortsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env[ALLOW_STACK_VARIABLE] ?? '').trim().toLowerCase();
  return v === '1' || v === 'true';
}

/**
 * `AddressPolicy.fromEnv(env)`, after checking it against the stack's `listeners`; throws
 * InvalidConfigError naming each entry and the ports it covers unless TRAWL_FETCH_ALLOW_STACK=1.
 */
export async function egressPolicyFromEnv(listeners: readonly StackListener[], env: NodeJS.ProcessEnv = process.env, options: EgressGuardOptions = {}): Promise<GuardedPolicy> {
  const policy = AddressPolicy.fromEnv(env);
  const exposures = await findStackExposures(policy.allow, listeners, options);
  if (exposures.length > 0 && !stackPortsAllowed(env)) throw new InvalidConfigError(stackExposureMessage(exposures));
  return { policy, exposures };
}

/** The refusal's text: what opens what, and the two ways out. */
export function stackExposureMessage(exposures: readonly StackExposure[]): string {
  return (
    `TRAWL_FETCH_ALLOW opens ports of Trawl's own stack to every tenant's crawls: ${describeExposures(exposures)}. ` +
    `Narrow each entry to the ports crawls need (127.0.0.1:8090 rather than 127.0.0.0/8 or localhost), ` +
    `or set ${ALLOW_STACK_VARIABLE}=1 to open them on purpose.`
  );
}

/** stackExposures() with the names resolved and the machine's addresses read. Nothing to resolve for an empty list. */
export async function findStackExposures(allow: AllowList, listeners: readonly StackListener[], options: EgressGuardOptions = {}): Promise<StackExposure[]> {
  if (allow.entries.length === 0) return [];
  const known = await knownAddresses(allow, listeners, options);
  return stackExposures(allow, listeners, known);
}

async function knownAddresses(allow: AllowList, listeners: readonly StackListener[], options: EgressGuardOptions): Promise<KnownAddresses> {
  const resolve = options.resolve ?? systemResolve;
  const timeoutMs = options.resolveTimeoutMs ?? 3_000;
  const names = new Set<string>();
  for (const e of allow.entries) if (e.host) names.add(e.host);
  for (const l of listeners) {
    const host = l.host.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
    if (!isIP(host)) names.add(host);
  }
  const resolved = await Promise.all(
    [...names].map(async (name) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<readonly string[]>((r) => (timer = setTimeout(() => r([]), timeoutMs)));
      try {
        return [name, await Promise.race([resolve(name).catch(() => []), late])] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const known = new Map<string, readonly string[]>(resolved.filter(([, a]) => a.length > 0));
  return { names: known, local: options.local ?? localAddresses() };
}

async function systemResolve(name: string): Promise<readonly string[]> {
  return (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);
}

function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

export { describeExposures, type StackExposure, type StackListener } from './stack-exposure.ts';
