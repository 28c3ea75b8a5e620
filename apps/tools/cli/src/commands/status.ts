/**
 * `trawl status [--json]`: the stack's parts and the services, each with its state, pid and the
 * restarts its keeper made; exit code 1 when something is down. A service that runs without a
 * keeper (its keeper was killed, or it was started before services had keepers) shows as
 * unsupervised: it runs, but nothing restarts it. Each service's operator port tells its health
 * (`/healthz`, `/readyz`) and its lag (the consumer and projection lag series of `/metrics`).
 */
import { formatStatusTable, stackStatus, styleFor as stackStyle } from '@trawl/stack';
import { styleFor, table } from '../lib/format.ts';
import { isInstalled, serviceCatalogue } from '../services/catalogue.ts';
import { serviceState, type ServicePhase } from '../services/supervisor.ts';
import { operatorUrlOf, serviceHealth, type ServiceHealth } from '../services/service-health.ts';

export interface ServiceStatus extends ServiceHealth {
  readonly name: string;
  /** Also `not built yet` for an app that does not exist. */
  readonly state: ServicePhase | 'not built yet';
  readonly pid: number | null;
  readonly supervised: boolean;
  readonly restarts: number;
  readonly log: string | null;
}

export async function serviceStatuses(): Promise<ServiceStatus[]> {
  return Promise.all(
    serviceCatalogue().map(async (spec): Promise<ServiceStatus> => {
      if (!isInstalled(spec.app)) return { name: spec.name, state: 'not built yet', pid: null, supervised: false, restarts: 0, log: null, health: 'off', unready: {}, lag: null, metrics_url: null };
      const st = serviceState(spec);
      // A stopped service is not asked: whatever answers on its port is not it.
      const health: ServiceHealth = st.running ? await serviceHealth(spec) : { health: 'down', unready: {}, lag: null, metrics_url: operatorUrlOf(spec) && `${operatorUrlOf(spec)}/metrics` };
      return { name: spec.name, state: st.state, pid: st.pid, supervised: st.keeperPid !== null, restarts: st.restarts, log: st.log, ...health };
    }),
  );
}

export async function status(options: { json?: boolean } = {}): Promise<number> {
  const out = process.stdout;
  const stack = await stackStatus();
  const services = await serviceStatuses();
  const allUp = stack.ok && services.every((s) => s.state === 'not built yet' || (s.state === 'running' && (s.health === 'ok' || s.health === 'off')));
  if (options.json) {
    out.write(JSON.stringify({ ok: allUp, stack: stack.parts, services }, null, 2) + '\n');
    return allUp ? 0 : 1;
  }
  const s = styleFor(out);
  out.write(formatStatusTable(stack.parts, stackStyle(out)) + '\n\n');
  const paint = (st: ServiceStatus): string => {
    if (st.state === 'running') return st.supervised ? s.green('running') : s.yellow('running, unsupervised');
    if (st.state === 'restarting' || st.state === 'stopping') return s.yellow(st.state);
    return st.state === 'stopped' ? s.red('stopped') : st.state;
  };
  const health = (st: ServiceStatus): string => {
    if (st.state === 'not built yet' || st.health === 'off') return '';
    if (st.health === 'ok') return s.green('ok');
    if (st.health === 'unready') return s.yellow(`unready${Object.keys(st.unready).length ? ` (${Object.keys(st.unready).join(', ')})` : ''}`);
    return s.red(st.health);
  };
  const rows = [['service', 'state', 'health', 'lag', 'pid', 'restarts', 'log']];
  for (const st of services) {
    rows.push([st.name, paint(st), health(st), st.lag === null ? '' : String(st.lag), st.pid ? String(st.pid) : '', st.log ? String(st.restarts) : '', st.log ?? '']);
  }
  out.write(table(rows) + '\n');
  return allUp ? 0 : 1;
}
