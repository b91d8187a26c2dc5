import type { AuditEntry } from '../../domain/audit.js';
import type { LoginFailureRepository } from '../ports/index.js';
import { audited } from './audit.js';
import type { Db } from './open.js';

/** The login_failures table (migrations 0008, 0016): one row per refused log-in, forgotten once out of the window. */
export class SqliteLoginFailures implements LoginFailureRepository {
  private readonly select;
  private readonly insert;
  private readonly forget;
  private readonly count;

  constructor(private readonly db: Db) {
    this.select = db.prepare<[string, number], number>('SELECT at FROM login_failures WHERE lockout_key = ? AND at > ? ORDER BY at').pluck();
    this.insert = db.prepare('INSERT INTO login_failures (lockout_key, at) VALUES (?, ?)');
    this.forget = db.prepare('DELETE FROM login_failures WHERE at <= ?');
    this.count = db.prepare<[string], number>('SELECT count(*) FROM login_failures WHERE lockout_key = ?').pluck();
  }

  async since(key: string, since: number): Promise<number[]> {
    return this.select.all(key, since);
  }

  /** Inserts the refusal and answers the key's count, in one IMMEDIATE transaction (SQLite writes one at a time). */
  async record(key: string, at: number, forgetUpTo: number, audit: AuditEntry[] = [], lock?: { refusals: number; entry: AuditEntry }): Promise<number> {
    return audited(
      this.db,
      () => {
        this.forget.run(forgetUpTo);
        this.insert.run(key, at);
        return this.count.get(key)!;
      },
      (count) => (lock && count === lock.refusals ? [...audit, lock.entry] : audit),
    );
  }
}
