import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DatabaseUnavailableError, ProjectionSupersededError, ProjectionVersionMismatchError, PROJECTOR_PG_ERROR_CODES, ProjectorPgError,
  ReplayConstraintError, ReplayInProgressError, ReplayOptionsError, ReplayVerificationError, isTransientDatabaseError,
} from './errors.ts';

const all: ProjectorPgError[] = [
  new ProjectionVersionMismatchError('m'), new ProjectionSupersededError('m'), new ReplayVerificationError('m', {}),
  new ReplayConstraintError('m', { table: 'job_log', constraint: null, key: {}, events: [] }),
  new ReplayOptionsError('m'), new ReplayInProgressError('m'), new DatabaseUnavailableError('m'),
];

describe('the projector-pg error catalogue', () => {
  it('has one class per code, each documented in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(all.map((e) => e.code).sort()).toEqual([...PROJECTOR_PG_ERROR_CODES].sort());
    for (const e of all) {
      expect(e).toBeInstanceOf(ProjectorPgError);
      expect(e.name).toBe(e.constructor.name);
      expect(readme).toContain(e.code);
    }
  });

  it('says which failures are worth retrying', () => {
    expect(all.filter((e) => e.retriable).map((e) => e.code).sort()).toEqual(['PG_DATABASE_UNAVAILABLE', 'PG_REPLAY_IN_PROGRESS']);
    expect(isTransientDatabaseError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientDatabaseError(Object.assign(new Error('deadlock'), { code: '40P01' }))).toBe(true);
    expect(isTransientDatabaseError(Object.assign(new Error('syntax'), { code: '42601' }))).toBe(false);
  });
});
