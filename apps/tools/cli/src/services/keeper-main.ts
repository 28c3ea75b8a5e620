/**
 * The keeper process's entry: `node <TRAWL_HOME>/build/keeper/main.mjs <name> <config JSON>`. The
 * service's name comes first so `trawl` can tell whose keeper a process is from its command line.
 */
import { runKeeper, type KeeperConfig } from './keeper.ts';

const [, , name, json] = process.argv;
if (!name || !json) {
  process.stderr.write('usage: keeper <service name> <config JSON>\n');
  process.exit(2);
}
runKeeper({ ...(JSON.parse(json) as Omit<KeeperConfig, 'name'>), name });
