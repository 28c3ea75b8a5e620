/**
 * Chaos, the soak (`npm run test:chaos` only: 5 minutes of load and faults, ~8 minutes in all):
 * `npm run soak -- --minutes 5` as an operator runs it (test/soak/main.ts), on a stack of its own
 * in a temporary TRAWL_HOME on free ports, never the shared one. The test holds it to its own
 * verdict and more: exit code 0, faults injected and healed, jobs completed and checked, every
 * invariant checked at least once and none failed. TRAWL_SOAK_SEED replays a run's faults;
 * TRAWL_SOAK_BROKERS=1 runs it on one broker.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@trawl/streams';
import type { SoakReport } from '../soak/report.ts';
import { report } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-soak-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function soak(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(repoRoot, 'apps', 'harness', 'e2e', 'test', 'soak', 'main.ts'), ...args], {
      cwd: repoRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // The soak's progress, as it comes: a long test that shows where it is.
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the nemesis soak', () => {
  it('5 minutes of schedules and crawls under random faults: the checker finds no violation', async () => {
    const json = join(dir, 'soak.json');
    const seed = process.env.TRAWL_SOAK_SEED;
    // A check round after 2 minutes as well as the final one: the periodic path is exercised too.
    const run = await soak(['--minutes', '5', '--check-minutes', '2', '--json', json, '--brokers', process.env.TRAWL_SOAK_BROKERS ?? '3', ...(seed ? ['--seed', seed] : [])]);
    if (!existsSync(json)) throw new Error(`the soak wrote no report (exit code ${run.code}); the end of its output:\n${run.stderr.split('\n').slice(-30).join('\n')}`);
    const r = JSON.parse(readFileSync(json, 'utf8')) as SoakReport;
    report('soak 5 min', { seed: r.seed, brokers: r.brokers, faults: r.faults, invariants: r.invariants, figures: r.figures, unplannedExits: r.unplannedExits.length });
    expect(r.violations, run.stdout).toEqual([]);
    expect(r.unrecovered).toBe(0);
    expect(run.code).toBe(0);
    expect(r.faultLog.length).toBeGreaterThanOrEqual(2);
    expect(r.figures.jobsChecked).toBeGreaterThanOrEqual(3);
    expect(r.figures.rounds).toBeGreaterThanOrEqual(2);
    for (const [name, t] of Object.entries(r.invariants)) {
      expect(t.checked, name).toBeGreaterThan(0);
      expect(t.failed, name).toBe(0);
    }
  }, 45 * 60_000);
});
