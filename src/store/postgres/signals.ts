import pg from 'pg';
import { LocalSignals } from '../shared/local-signals.js';
import type { Signal, SignalBus } from '../ports/index.js';
import type { Database } from './pool.js';

/** The channel of every signal (docs/postgresql.md "Several instances"). */
export const SIGNAL_CHANNEL = 'scanhub';
/** How often the listening connection is checked: a peer that vanished without a FIN is noticed within this. */
const CHECK_INTERVAL_MS = 5_000;
/** Waits between attempts to listen again, growing to the last. */
const RETRY_DELAYS_MS = [100, 250, 500, 1_000, 2_000, 5_000];

/**
 * Signals over PostgreSQL `LISTEN/NOTIFY`: `publish` is a `pg_notify` on the pool (the store also
 * sends from inside transactions, so a signal goes out exactly when its change commits), and one
 * dedicated connection, opened at the first subscription, listens. A lost connection is opened
 * again with growing waits; meanwhile `fault()` says why, and once listening again the resume
 * handlers run, since signals sent in the gap were not heard.
 */
export class PgSignals implements SignalBus {
  private readonly local = new LocalSignals();
  private client: pg.Client | undefined;
  /** Why the instance is not listening; undefined while it listens and during the first attempt at start. */
  private reason: string | undefined;
  private attempts = 0;
  private listenedOnce = false;
  private retry: NodeJS.Timeout | undefined;
  private check: NodeJS.Timeout | undefined;
  private closed = false;
  private heard!: () => void;
  private readonly firstListen = new Promise<void>((resolve) => (this.heard = resolve));

  constructor(
    private readonly url: string,
    private readonly db: Database,
  ) {}

  subscribe(handler: (signal: Signal) => void): () => void {
    const unsubscribe = this.local.subscribe(handler);
    if (!this.client && !this.retry && !this.closed) void this.listen();
    return unsubscribe;
  }

  async publish(signal: Signal): Promise<void> {
    await this.db.query('SELECT pg_notify($1, $2)', [SIGNAL_CHANNEL, JSON.stringify(signal)]);
  }

  onResume(handler: () => void): () => void {
    return this.local.onResume(handler);
  }

  fault(): string | undefined {
    return this.local.subscribed ? this.reason : undefined;
  }

  listening(): Promise<void> {
    return this.firstListen;
  }

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.check);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    this.retry = undefined;
    const client = new pg.Client({ connectionString: this.url, application_name: 'scanhub-signals', keepAlive: true, connectionTimeoutMillis: 10_000 });
    this.client = client;
    const lost = (error: Error) => this.lost(client, error);
    client.on('error', lost);
    client.on('end', () => lost(new Error('the connection ended')));
    client.on('notification', (message) => {
      if (message.channel !== SIGNAL_CHANNEL || !message.payload) return;
      let signal: Signal;
      try {
        signal = JSON.parse(message.payload) as Signal;
      } catch {
        return; // Not ours: someone else's NOTIFY on the channel.
      }
      this.local.deliver(signal);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${SIGNAL_CHANNEL}`);
    } catch (error) {
      return this.lost(client, error as Error);
    }
    if (this.client !== client) return;
    this.reason = undefined;
    this.attempts = 0;
    this.check = setInterval(() => {
      client.query('SELECT 1').catch((error: Error) => this.lost(client, error));
    }, CHECK_INTERVAL_MS).unref();
    if (this.listenedOnce) this.local.resumed();
    this.listenedOnce = true;
    this.heard();
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    clearInterval(this.check);
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.reason = `not hearing other instances (LISTEN ${SIGNAL_CHANNEL}): ${error.message.split('\n')[0]}; retrying`;
    const delay = RETRY_DELAYS_MS[Math.min(this.attempts++, RETRY_DELAYS_MS.length - 1)]!;
    this.retry = setTimeout(() => void this.listen(), delay);
    this.retry.unref();
  }
}
