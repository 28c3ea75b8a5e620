import { describe, expect, it } from 'vitest';
import { PartStartError } from '../src/errors.ts';
import { formatStatusTable, formatUpStep, formatUpSummary } from '../src/report.ts';
import type { UpStep } from '../src/stack.ts';

describe('progress lines', () => {
  it('show part, endpoint, time and what happened', () => {
    const line = formatUpStep({ part: 'kafka', ok: true, ms: 4100, up: { part: 'kafka', action: 'started', endpoint: '127.0.0.1:9092', pid: 42, note: 'cluster x' } });
    expect(line).toMatch(/^✔ kafka\s+127\.0\.0\.1:9092\s+\(4\.1 s\)\s+started, pid 42: cluster x$/);
  });

  it('say for a failed part why (its log) and what to do', () => {
    const error = new PartStartError('registry', 'Apicurio Registry exited during start-up', 'read .trawl/logs/registry.log', { logTail: 'FATAL no database' });
    const step: UpStep = { part: 'registry', ok: false, ms: 3200, error };
    const text = formatUpStep(step);
    expect(text).toContain('✖ registry');
    expect(text).toContain('exited during start-up');
    expect(text).toContain('│ FATAL no database');
    expect(text).toContain('→ read .trawl/logs/registry.log');
    expect(formatUpSummary(false, 3200, [step])).toContain('FAILED (3.2 s): registry');
  });
});

describe('status table', () => {
  it('has a column per fact and marks external parts', () => {
    const table = formatStatusTable([
      { part: 'postgres', state: 'up', ours: false, endpoint: 'postgres://postgres@127.0.0.1:5432/trawl', pid: 7, rssMb: 58, note: 'external server' },
      { part: 'kafka', state: 'down', ours: false, endpoint: '127.0.0.1:9092', note: 'port closed' },
    ]);
    const [header, pgRow, kafkaRow] = table.split('\n');
    expect(header).toMatch(/^PART\s+STATE\s+ENDPOINT\s+PID\s+RSS MB\s+NOTE$/);
    expect(pgRow).toMatch(/^postgres\s+up \(ext\)\s+postgres:\S+\s+7\s+58\s+external server$/);
    expect(kafkaRow).toMatch(/^kafka\s+down\s+127\.0\.0\.1:9092\s+-\s+-\s+port closed$/);
  });
});
