import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/heap-service.ts', import.meta.url));

/** Runs the fixture service until `until` matches a log line (then SIGTERM) or it exits; its JSON lines and exit code. */
function runFixture(env: Record<string, string>, until: (line: Record<string, unknown>) => boolean): Promise<{ lines: Record<string, unknown>[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { env: { ...process.env, TRAWL_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: Record<string, unknown>[] = [];
    let rest = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop()!;
      for (const p of parts) {
        if (!p.startsWith('{')) continue;
        const line = JSON.parse(p) as Record<string, unknown>;
        lines.push(line);
        if (until(line)) child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ lines, code });
    });
  });
}

describe('runService heap ceiling', () => {
  it('collects once the heap passes TRAWL_HEAP_CEILING_MB, in a process started without --expose-gc', async () => {
    const { lines, code } = await runFixture({ TRAWL_HEAP_CEILING_MB: '40' }, (l) => l.msg === 'heap past its ceiling: collected');
    const collected = lines.find((l) => l.msg === 'heap past its ceiling: collected');
    expect(collected, JSON.stringify(lines.slice(-5))).toBeDefined();
    // Past the ceiling as the service measured it (whole MB: 40.4 MB reads as 40).
    expect(collected!.heapBeforeMb as number).toBeGreaterThanOrEqual(40);
    expect(code).toBe(0);
  }, 30_000);

  it('refuses a ceiling that is not a number, with a line that names the variable', async () => {
    const { lines, code } = await runFixture({ TRAWL_HEAP_CEILING_MB: 'lots' }, () => false);
    expect(code).toBe(1);
    const fatal = lines.find((l) => l.level === 60);
    expect(JSON.stringify(fatal)).toMatch(/TRAWL_HEAP_CEILING_MB must be a number of MB/);
  }, 30_000);
});
