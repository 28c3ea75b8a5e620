/** `trawl status`: the stack's parts and the services; exit code 1 when something is down. */
import { formatStatusTable, stackStatus, styleFor as stackStyle } from '@trawl/stack';
import { styleFor, table } from '../lib/format.ts';
import { isInstalled, serviceCatalogue } from '../services/catalogue.ts';
import { serviceState } from '../services/supervisor.ts';

export async function status(): Promise<number> {
  const out = process.stdout;
  const s = styleFor(out);
  const stack = await stackStatus();
  out.write(formatStatusTable(stack.parts, stackStyle(out)) + '\n\n');
  const rows = [['service', 'state', 'pid', 'log']];
  let allUp = stack.ok;
  for (const spec of serviceCatalogue()) {
    if (!isInstalled(spec.app)) {
      rows.push([spec.name, 'not built yet', '', '']);
      continue;
    }
    const st = serviceState(spec);
    if (!st.running) allUp = false;
    rows.push([spec.name, st.running ? s.green('running') : s.red('stopped'), st.pid && st.running ? String(st.pid) : '', st.log]);
  }
  out.write(table(rows) + '\n');
  return allUp ? 0 : 1;
}
