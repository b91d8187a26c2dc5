/**
 * What `scanhub events tail` has shown. Each poll asks for events with `created >= start`;
 * the start moves up behind the newest event seen, keeping an overlap for events that reach
 * the server late (their `created` is set by the device), and ids seen within the overlap are
 * remembered so no event prints twice. Pure: the caller polls and prints.
 */
export interface TailEvent {
  id: string;
  created: number;
}

/** How far behind the newest event the next poll starts. */
export const TAIL_OVERLAP_MS = 10_000;

export class TailCursor {
  private readonly seen = new Map<string, number>();
  private newest: number;

  /** `start`: the time from which events count as new (usually the server's now). */
  constructor(
    start: number,
    private readonly overlapMs = TAIL_OVERLAP_MS,
  ) {
    this.newest = start;
    this.start = start;
  }

  /** The `start_time_millis` of the next poll. */
  start: number;

  /** The events of a poll not shown before, oldest first; remembers them and moves the start. */
  accept<T extends TailEvent>(events: readonly T[]): T[] {
    const fresh = events
      .filter((event) => event.created >= this.start && !this.seen.has(event.id))
      .sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const event of fresh) {
      this.seen.set(event.id, event.created);
      if (event.created > this.newest) this.newest = event.created;
    }
    const start = Math.max(this.start, this.newest - this.overlapMs);
    if (start > this.start) {
      this.start = start;
      for (const [id, created] of this.seen) if (created < start) this.seen.delete(id);
    }
    return fresh;
  }
}
