import type { StorageStatus } from '../ports/index.js';

/** How soon a full store probes again: soon at first, then every 2 s, so that space returning is seen within seconds. */
export interface ProbeBackoff {
  firstMs: number;
  maxMs: number;
}

export const PROBE_BACKOFF: ProbeBackoff = { firstMs: 250, maxMs: 2000 };

/**
 * StorageStatus of one store: a refused write makes it full; from then on `probe` (a small write
 * that needs new space, rejecting while there is none) runs with a back-off until it succeeds,
 * which makes it writable again. Nothing probes while the store is writable.
 */
export class StorageWatch implements StorageStatus {
  private reason: string | undefined;
  private delayMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners = new Set<(full: string | undefined) => void>();

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly backoff: ProbeBackoff = PROBE_BACKOFF,
  ) {}

  full(): string | undefined {
    return this.reason;
  }

  refused(reason: string): void {
    if (this.closed || this.reason !== undefined) return;
    this.reason = reason;
    this.delayMs = this.backoff.firstMs;
    this.emit();
    this.schedule();
  }

  onChange(listener: (full: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops probing (the store closes). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    // unref: a store waiting for space must not keep a process alive that is otherwise done.
    this.timer = setTimeout(() => void this.runProbe(), this.delayMs).unref();
  }

  private async runProbe(): Promise<void> {
    try {
      await this.probe();
    } catch {
      // Still full (or the database failed otherwise, which /healthz reports on its own): later.
      if (this.closed) return;
      this.delayMs = Math.min(this.delayMs * 2, this.backoff.maxMs);
      return this.schedule();
    }
    if (this.closed) return;
    this.reason = undefined;
    this.emit();
  }

  private emit(): void {
    for (const listener of this.listeners) listener(this.reason);
  }
}
