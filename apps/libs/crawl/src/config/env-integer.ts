import { InvalidConfigError } from '../errors.ts';

/** An integer setting from the environment: `dflt` when unset or empty; InvalidConfigError naming it when not an integer ≥ `min`. */
export function envInteger(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidConfigError(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}
