/**
 * Integration tests run against the real local stack. This checks that the parts a test needs
 * answer, and otherwise fails with which part is down and how to start it — not with a timeout
 * deep inside kafkajs.
 */
import net from 'node:net';
import pg from 'pg';
import { endpoints, type Endpoints, httpTarget, redactUrl } from '@trawl/base';
import { StackUnavailableError } from '../errors.ts';
import { ensureDatabase } from './database.ts';

function tcpAnswers(hostPort: string, timeoutMs = 2_000): Promise<boolean> {
  const [host, port] = hostPort.includes(':') ? [hostPort.slice(0, hostPort.lastIndexOf(':')), hostPort.slice(hostPort.lastIndexOf(':') + 1)] : [hostPort, '9092'];
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function registryAnswers(endpoint: string): Promise<boolean> {
  try {
    const { url, authorization } = httpTarget(endpoint);
    const res = await fetch(`${url.replace(/\/+$/, '')}/subjects`, { headers: authorization ? { authorization } : {}, signal: AbortSignal.timeout(3_000) });
    return res.ok;
  } catch {
    return false;
  }
}

async function postgresAnswers(url: string): Promise<boolean> {
  try {
    await ensureDatabase(url);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

export interface StackNeeds {
  readonly kafka?: boolean;
  readonly registry?: boolean;
  readonly postgres?: boolean;
}

/**
 * Throws StackUnavailableError naming every needed part that does not answer within `patienceMs`
 * (a part checked once may miss its few seconds on a busy machine, so those are asked again).
 */
export async function requireStack(needs: StackNeeds = { kafka: true, registry: true, postgres: true }, ep: Endpoints = endpoints(), patienceMs = 20_000): Promise<Endpoints> {
  let checks: [string, () => Promise<boolean>][] = [];
  if (needs.kafka) checks.push([`Kafka at ${ep.kafkaBrokers.join(',')}`, () => tcpAnswers(ep.kafkaBrokers[0] ?? '127.0.0.1:9092')]);
  if (needs.registry) checks.push([`schema registry at ${redactUrl(ep.schemaRegistryUrl)}`, () => registryAnswers(ep.schemaRegistryUrl)]);
  if (needs.postgres) checks.push([`Postgres at ${redactUrl(ep.databaseUrl)}`, () => postgresAnswers(ep.databaseUrl)]);
  const until = Date.now() + patienceMs;
  for (;;) {
    const answers = await Promise.all(checks.map(([, check]) => check()));
    checks = checks.filter((_, i) => !answers[i]);
    if (checks.length === 0 || Date.now() >= until) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const down = checks.map(([name]) => name);
  if (down.length > 0) {
    throw new StackUnavailableError(`not answering: ${down.join('; ')}. Start the local stack with \`npm run stack -- up\`, or set KAFKA_BROKERS / SCHEMA_REGISTRY_URL / DATABASE_URL.`);
  }
  return ep;
}
