/**
 * Supervision under `trawl up`: a service runs under its keeper, so a worker SIGKILLed (the
 * out-of-memory killer, a crash) runs again within seconds and `trawl status` counts the restart; a
 * service that keeps dying at start is restarted with growing delays, and `trawl down` stops its
 * keeper also while it waits between two runs. Real processes: the compiled worker on the real
 * Kafka and registry, on topics of its own; `trawl status` and `trawl down` as a user runs them.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createLogger, stackEnvFile } from '@trawl/streams';
import { deleteSubjects } from '@trawl/streams/testing';
import { serviceCatalogue, type ServiceSpec } from '../src/services/catalogue.ts';
import { compileServices, serviceState, startService, stopService } from '../src/services/supervisor.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'trawl.js');
const prefix = `keep${randomBytes(3).toString('hex')}.`;
const home = mkdtempSync(join(tmpdir(), 'trawl-cli-keep-'));
const savedHome = process.env.TRAWL_HOME;
let env: NodeJS.ProcessEnv;
const worker = serviceCatalogue().find((s) => s.name === 'worker-1')!;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  for (const deadline = Date.now() + ms; ; await sleep(50)) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${JSON.stringify(serviceState(worker))}`);
  }
}

function trawl(args: string[]) {
  return run(process.execPath, [BIN, ...args], { env, timeout: 90_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

beforeAll(async () => {
  // The worker finds the running stack as a service does, through the stack's env file (its
  // Postgres, its secrets key…): a copy of it goes into this test's own home.
  const stackFile = stackEnvFile(process.env);
  if (existsSync(stackFile)) copyFileSync(stackFile, join(home, 'stack.env'));
  // The supervisor's files (build, logs, pids) under a home of this test's own.
  process.env.TRAWL_HOME = home;
  env = { ...process.env, TRAWL_HOME: home, TRAWL_TOPIC_PREFIX: prefix, NO_COLOR: '1', TRAWL_LOG_LEVEL: 'info' };
  await compileServices([worker]);
});

afterAll(async () => {
  for (const spec of serviceCatalogue()) await stopService(spec, 5_000).catch(() => undefined);
  process.env.TRAWL_HOME = savedHome;
  if (savedHome === undefined) delete process.env.TRAWL_HOME;
  rmSync(home, { recursive: true, force: true });
  const logger = createLogger('supervision-test', { TRAWL_LOG_LEVEL: 'silent' });
  const admin = createKafka({ clientId: 'supervision-test', logger }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
  await deleteSubjects(prefix);
});

describe('services under their keepers', () => {
  it('a SIGKILLed worker runs again within seconds; status counts the restart; down stops it all', async () => {
    const first = await startService(worker, env);
    expect(first).toMatchObject({ state: 'running', running: true, restarts: 0 });
    const keeperPid = first.keeperPid!;
    expect(keeperPid).toBeGreaterThan(0);
    // Wait until the worker is up for real (its "started" line), then kill it without a goodbye.
    await until('the worker started', 60_000, () => (readFileSync(first.log, 'utf8').includes('"msg":"worker started"') ? true : undefined));

    const killedAt = Date.now();
    process.kill(first.pid!, 'SIGKILL');
    const again = await until('the worker to run again', 30_000, () => {
      const st = serviceState(worker);
      return st.running && st.pid !== first.pid ? st : undefined;
    });
    const restartMs = Date.now() - killedAt;
    expect(restartMs).toBeLessThan(10_000);
    // …and up for real again: connected, provisioned, consuming.
    await until('the restarted worker started', 60_000, () => (readFileSync(first.log, 'utf8').split('"msg":"worker started"').length === 3 ? true : undefined));
    const readyMs = Date.now() - killedAt;
    expect(again).toMatchObject({ state: 'running', restarts: 1, keeperPid });

    const table = await trawl(['status']);
    // Columns: state, health, lag (empty until the group has offsets), pid, restarts.
    expect(table.stdout).toMatch(new RegExp(`worker-1\\s+running\\s+\\S+\\s+(?:\\d+\\s+)?${again.pid}\\s+1\\s`));
    const json = JSON.parse((await trawl(['status', '--json'])).stdout) as { services: { name: string }[] };
    expect(json.services.find((s) => s.name === 'worker-1')).toMatchObject({ state: 'running', pid: again.pid, supervised: true, restarts: 1 });
    const keeperLines = readFileSync(first.log, 'utf8').split('\n').filter((l) => l.includes('"name":"keeper"'));
    expect(keeperLines.some((l) => /"signal":"SIGKILL".*"restarts":1.*service exited \(SIGKILL\)/.test(l))).toBe(true);

    const down = await trawl(['down', '--keep-stack']);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toMatch(/↓ worker-1 stopped/);
    expect(serviceState(worker)).toMatchObject({ state: 'stopped', running: false, keeperPid: null });
    expect(() => process.kill(keeperPid, 0)).toThrow();
    console.log(`SUPERVISION ${JSON.stringify({ restartMs, readyMs, restarts: again.restarts })}`);
  });

  it('restarts a service that keeps dying at start with growing delays; down stops its keeper between two runs', async () => {
    // A setting the worker refuses at start: it exits with code 1 every time.
    const broken: ServiceSpec = { ...worker, env: { ...worker.env, TRAWL_FETCH_RETRY_DELAYS_MS: 'soon' } };
    const first = await startService(broken, env);
    const keeperPid = first.keeperPid!;
    const looping = await until('two restarts', 60_000, () => {
      const st = serviceState(broken);
      return st.restarts >= 2 && st.state === 'restarting' ? st : undefined;
    });
    expect(looping.running).toBe(false);
    const log = readFileSync(first.log, 'utf8');
    expect(log).toMatch(/service exited \(code 1\) after \d+ ms; restart 1 in 1000 ms/);
    expect(log).toMatch(/restart 2 in 2000 ms/);

    const stoppedAt = Date.now();
    const down = await trawl(['down', '--keep-stack']);
    expect(down.code, down.stderr).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(30_000); // a CLI process under tsx, on a busy machine
    expect(() => process.kill(keeperPid, 0)).toThrow();
    // Nothing comes back: the restart it was waiting for never happens.
    await sleep(5_000);
    expect(serviceState(broken)).toMatchObject({ state: 'stopped', running: false, keeperPid: null });
    expect(existsSync(join(home, 'run', 'worker-1.pid'))).toBe(false);
  });
});
