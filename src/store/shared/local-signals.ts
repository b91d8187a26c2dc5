import type { Signal, SignalBus } from '../ports/index.js';

/**
 * Signals within one process: what a SQLite deployment (one process per data directory) needs,
 * and the delivery half of the PostgreSQL bus. Handlers run synchronously, in subscription order;
 * one that throws does not keep the signal from the others.
 */
export class LocalSignals implements SignalBus {
  private readonly handlers = new Set<(signal: Signal) => void>();
  private readonly resumeHandlers = new Set<() => void>();

  subscribe(handler: (signal: Signal) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async publish(signal: Signal): Promise<void> {
    this.deliver(signal);
  }

  onResume(handler: () => void): () => void {
    this.resumeHandlers.add(handler);
    return () => this.resumeHandlers.delete(handler);
  }

  fault(): string | undefined {
    return undefined;
  }

  async listening(): Promise<void> {}

  /** Whether anyone listens (the PostgreSQL bus listens only then). */
  get subscribed(): boolean {
    return this.handlers.size > 0;
  }

  deliver(signal: Signal): void {
    for (const handler of this.handlers) {
      try {
        handler(signal);
      } catch {
        // A handler's failure is its own (the broker logs its own); the others still hear it.
      }
    }
  }

  resumed(): void {
    for (const handler of this.resumeHandlers) handler();
  }
}
