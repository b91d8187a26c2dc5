/**
 * Gathers the items of one turn of the event loop (or of `holdMs`) and hands them to `flush`
 * together, as one unit of work in the store: on SQLite, where the ingest writer thread shares the
 * one write lock, a transaction per command would have the two take turns hundreds of times a
 * second. Each item's promise settles with its own result, or with the flush's error.
 */
export class TickBatch<I, O> {
  private items: I[] = [];
  private waiters: { resolve: (result: O) => void; reject: (error: Error) => void }[] = [];

  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly holdMs = 0,
  ) {}

  add(item: I): Promise<O> {
    if (this.items.length === 0) {
      if (this.holdMs > 0) setTimeout(() => void this.run(), this.holdMs);
      else setImmediate(() => void this.run());
    }
    this.items.push(item);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private async run(): Promise<void> {
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.waiters = [];
    try {
      const results = await this.flush(items);
      waiters.forEach((waiter, i) => waiter.resolve(results[i]!));
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error as Error);
    }
  }
}
