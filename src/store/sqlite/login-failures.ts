import type { Db } from './open.js';

/** The login_failures table (migrations 0008, 0016): one row per refused log-in, forgotten once out of the window. */
export class LoginFailureStore {
  private readonly select;
  private readonly insert;
  private readonly forget;
  private readonly count;

  constructor(db: Db) {
    this.select = db.prepare<[string, number], number>('SELECT at FROM login_failures WHERE lockout_key = ? AND at > ? ORDER BY at').pluck();
    this.insert = db.prepare('INSERT INTO login_failures (lockout_key, at) VALUES (?, ?)');
    this.forget = db.prepare('DELETE FROM login_failures WHERE at <= ?');
    this.count = db.prepare<[string], number>('SELECT count(*) FROM login_failures WHERE lockout_key = ?').pluck();
  }

  /** Inserts the refusal and answers the key's count; the caller runs it in an IMMEDIATE transaction. */
  record(key: string, at: number, forgetUpTo: number): number {
    this.forget.run(forgetUpTo);
    this.insert.run(key, at);
    return this.count.get(key)!;
  }

  since(key: string, since: number): number[] {
    return this.select.all(key, since);
  }
}
