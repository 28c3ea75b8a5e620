import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@trawl/base';
import { startHeartbeatFile } from './heartbeat-file.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('heartbeat file', () => {
  it('is rewritten while the event loop turns, and no longer once stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-heartbeat-'));
    const file = join(dir, 'heartbeat');
    try {
      const stop = startHeartbeatFile({ file, everyMs: 50, logger: createLogger('heartbeat-test', { TRAWL_LOG_LEVEL: 'silent' }) });
      await sleep(30);
      const first = Number(readFileSync(file, 'utf8'));
      await sleep(200);
      const second = Number(readFileSync(file, 'utf8'));
      expect(second).toBeGreaterThan(first);
      stop();
      const mtime = statSync(file).mtimeMs;
      await sleep(200);
      expect(statSync(file).mtimeMs).toBe(mtime);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
