import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Background work (an export thread, a backup) gives way to ingest and API requests when they
 * compete for a core: the calling thread, not the process, runs at nice 10. On Linux each thread
 * has its own nice value and /proc/thread-self names it; elsewhere, or if refused, it runs at
 * normal priority.
 */
export function lowerThreadPriority(): void {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
  } catch {
    // Not Linux, or not permitted: normal priority.
  }
}
