/**
 * Which dead letters were re-driven, by whom and when (Postgres, migration owner `console`). The
 * row is written before the message is sent and removed if the send fails, so a double click or
 * two browsers cannot republish one dead letter twice; a message that fails again comes back as a
 * new dead letter, with a new position, and can be re-driven in its turn.
 */
import { migrate, type Migration, type Pool } from '@trawl/store';

export const CONSOLE_MIGRATION_OWNER = 'console';

export const CONSOLE_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    description: 'dead letters re-driven from the console',
    sql: `
      CREATE TABLE console_redrives (
        dead_letter text PRIMARY KEY,
        user_id text NOT NULL,
        job_id text NOT NULL,
        origin_topic text NOT NULL,
        redriven_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX console_redrives_user ON console_redrives (user_id, redriven_at DESC);
    `,
  },
];

export interface Redrive {
  readonly dead_letter: string;
  readonly redriven_at: Date;
}

export class RedriveLog {
  private ready: Promise<unknown> | undefined;

  constructor(private readonly db: Pool) {}

  /** Migrates on first use: the API's tests, which never re-drive, never pay for it. */
  private ensure(): Promise<unknown> {
    this.ready ??= migrate(this.db, CONSOLE_MIGRATION_OWNER, CONSOLE_MIGRATIONS).catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Claims a dead letter for a re-drive; false when it was claimed before. */
  async claim(deadLetter: string, userId: string, jobId: string, originTopic: string): Promise<boolean> {
    await this.ensure();
    const { rowCount } = await this.db.query(
      'INSERT INTO console_redrives (dead_letter, user_id, job_id, origin_topic) VALUES ($1, $2, $3, $4) ON CONFLICT (dead_letter) DO NOTHING',
      [deadLetter, userId, jobId, originTopic],
    );
    return (rowCount ?? 0) === 1;
  }

  /** Gives a claim back after a failed send, so the user can try again. */
  async release(deadLetter: string): Promise<void> {
    await this.db.query('DELETE FROM console_redrives WHERE dead_letter = $1', [deadLetter]);
  }

  /** Re-drives of the user's dead letters, by position. */
  async of(userId: string, deadLetters: readonly string[]): Promise<Map<string, Date>> {
    if (deadLetters.length === 0) return new Map();
    await this.ensure();
    const { rows } = await this.db.query<Redrive>(
      'SELECT dead_letter, redriven_at FROM console_redrives WHERE user_id = $1 AND dead_letter = ANY($2)',
      [userId, [...deadLetters]],
    );
    return new Map(rows.map((r) => [r.dead_letter, r.redriven_at]));
  }
}
