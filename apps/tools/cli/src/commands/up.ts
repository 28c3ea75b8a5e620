/**
 * `trawl up`: the local stack, then every service in the background (logs in .trawl/logs/). Apps
 * that do not exist yet are skipped with a warning, so the command works while Trawl grows.
 */
import { ALLOW_STACK_VARIABLE, describeExposures, egressPolicyFromEnv, type EgressGuardOptions } from '@trawl/crawl/egress';
import { formatUpStep, formatUpSummary, stackUp, styleFor as stackStyle } from '@trawl/stack';
import { stackListeners } from '@trawl/streams';
import { apiBaseUrl } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { styleFor } from '../lib/format.ts';
import { isInstalled, serviceCatalogue } from '../services/catalogue.ts';
import { lastLogLines, serviceState, startService, staysUp, stopService } from '../services/supervisor.ts';
import { compileAndReport } from './build.ts';

/** The port the bundled demo site listens on: TRAWL_DEMO_PORT, default 8090. */
export function demoPort(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_DEMO_PORT || '8090';
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new CliError(`TRAWL_DEMO_PORT must be a TCP port (1-65535), got "${raw}"`);
  return port;
}

/**
 * What services started by `trawl up` may fetch on this machine: the demo site's port, nothing else.
 * The crawler refuses loopback by default (SSRF guard); opening all of it would hand every tenant's
 * crawl the stack's ClickHouse, Postgres and registry on 127.0.0.1, so only the demo's port opens.
 */
export function localFetchAllow(env: NodeJS.ProcessEnv = process.env): string {
  const port = demoPort(env);
  return `127.0.0.1:${port},[::1]:${port},localhost:${port}`;
}

/** The environment of every service `trawl up` starts. An explicit TRAWL_FETCH_ALLOW (even empty) wins. */
export function serviceEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, TRAWL_FETCH_ALLOW: env.TRAWL_FETCH_ALLOW ?? localFetchAllow(env) };
}

/**
 * What `trawl up` checks before it starts anything: it prints the allow-list every service will get
 * (one inherited from a shell is easy to miss), and refuses one that opens a port of the stack
 * itself — Postgres, ClickHouse, Kafka, the registry, S3, the API, an operator port — to every
 * tenant's crawls, unless TRAWL_FETCH_ALLOW_STACK=1 says so on purpose. Each service checks again
 * at its own start. `env` is `trawl up`'s own environment; the services get serviceEnv(env).
 */
export async function checkEgress(env: NodeJS.ProcessEnv, options: EgressGuardOptions = {}): Promise<{ readonly line: string; readonly warning: string | null }> {
  const services = serviceEnv(env);
  const text = services.TRAWL_FETCH_ALLOW ?? '';
  const origin = env.TRAWL_FETCH_ALLOW === undefined ? "trawl up's default: the demo site's port" : 'from the environment';
  const { exposures } = await egressPolicyFromEnv(stackListeners(services), services, options).catch((err: unknown) => {
    throw new CliError(`${(err as Error).message} Nothing was started.`);
  });
  return {
    line: text.trim() === '' ? `egress: TRAWL_FETCH_ALLOW is empty (${origin}): crawls reach the public internet only` : `egress: TRAWL_FETCH_ALLOW=${text} (${origin})`,
    warning: exposures.length > 0 ? `${ALLOW_STACK_VARIABLE}=1: tenants' crawls may reach the stack itself: ${describeExposures(exposures)}` : null,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitForHttp(url: string, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return true;
    } catch {
      // not yet
    }
    await sleep(250);
  }
  return false;
}

export async function up(): Promise<void> {
  const err = process.stderr;
  const s = styleFor(err);
  const st = stackStyle(err);
  const egress = await checkEgress(process.env);
  err.write(`${egress.line}\n`);
  if (egress.warning) err.write(s.yellow(`! ${egress.warning}\n`));
  const report = await stackUp({ onStep: (step) => void err.write(formatUpStep(step, st) + '\n') });
  err.write(formatUpSummary(report.ok, report.ms, report.steps, st) + '\n');
  if (!report.ok) throw new CliError('the local stack did not come up (see above); services were not started');
  // Checked again with the ports the stack has now chosen (a first run, a private Postgres on a
  // free port, a port moved by a setting): the first check could only read the last run's.
  if (report.envChanged) await checkEgress(process.env);

  const env = serviceEnv();
  const installed = serviceCatalogue().filter((spec) => {
    if (isInstalled(spec.app)) return true;
    err.write(s.yellow(`! ${spec.name}: apps/services/${spec.app}/src/main.ts does not exist yet — skipped\n`));
    return false;
  });
  // Services read their endpoints (credentials included) once, at start: when this `up` changed
  // stack.env (new credentials on a stack made before it had any, a moved port), the running ones
  // hold stale endpoints and are restarted.
  if (report.envChanged) {
    for (const spec of installed.filter((x) => serviceState(x).running || serviceState(x).keeperPid !== null)) {
      await stopService(spec);
      err.write(`${s.yellow('↻')} ${spec.name} stopped to restart: the stack's endpoints changed (${report.envFile})\n`);
    }
  }
  const toStart = installed.filter((spec) => {
    const st = serviceState(spec);
    return !st.running && st.keeperPid === null;
  });
  if (toStart.length > 0) await compileAndReport(toStart);
  const started: string[] = [];
  for (const spec of installed) {
    const before = serviceState(spec);
    const state = await startService(spec, env);
    if (before.running || before.keeperPid !== null) err.write(s.dim(`= ${spec.name} already ${before.state}${before.pid ? ` (pid ${before.pid})` : ''}${before.keeperPid ? '' : ', unsupervised'}\n`));
    else {
      started.push(spec.name);
      err.write(`${s.green('↑')} ${spec.name} started (pid ${state.pid ?? '–'}, kept by ${state.keeperPid ?? '–'}) → ${state.log}\n`);
    }
  }
  // A service that dies at once (bad config, port taken) should not go unnoticed.
  const dead: string[] = [];
  await Promise.all(
    serviceCatalogue()
      .filter((spec) => started.includes(spec.name))
      .map(async (spec) => {
        if (!(await staysUp(spec, 2_000))) dead.push(spec.name);
      }),
  );
  for (const name of dead) err.write(s.red(`✗ ${name} exited at start (its keeper starts it again, waiting longer each time); last lines of its log:\n`) + lastLogLines(name) + '\n');
  if (isInstalled('api') && !dead.includes('api')) {
    const ok = await waitForHttp(`${apiBaseUrl()}/healthz`, 60_000);
    err.write(ok ? `${s.green('✓')} API ready at ${apiBaseUrl()} (docs: ${apiBaseUrl()}/docs)\n` : s.red(`✗ the API did not answer at ${apiBaseUrl()}\n`));
    if (!ok) dead.push('api');
  }
  if (dead.length) throw new CliError(`not every service came up: ${dead.join(', ')} (logs in .trawl/logs/)`);
}
