import { setFlagsFromString } from 'node:v8';

/**
 * V8's collector settings `serve` runs with (docs/operations.md "Tuning: V8's heap"). With its
 * defaults, a server whose live heap grows by a few kilobytes per connection, as in a reconnect
 * storm, starts a full marking every 3-5 MB of growth (17 mark-compacts in a storm of 2,000
 * gateways): V8 sizes the heap to about 1.1x what survived, and starts marking long before that
 * limit. Growing the heap to 4x what survived, and starting to mark at 90 % of the room left (at
 * once at 95 %), leaves 7: 11-13 % less CPU per connection, the same ingest; about 14 MB more
 * RSS at rest, and event pages' server time about 3 % longer (bench/README.md, "Issue 17: reconnect
 * storm").
 *
 * V8 reads these three at every limit it computes, so they take effect when set at run time;
 * its initial heap size, which would do more, is fixed at start. A flag given on node's command
 * line (`node --heap-growing-percent=... scanhub.js serve`) is left as given.
 */
export const SERVE_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=300', '--incremental-marking-soft-trigger=90', '--incremental-marking-hard-trigger=95'];

/** Applies SERVE_HEAP_FLAGS but those node was started with (`execArgv`); returns the flags it set. */
export function tuneServeHeap(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(execArgv.map((arg) => arg.split('=')[0]!.replace(/_/g, '-')));
  const applied = SERVE_HEAP_FLAGS.filter((flag) => !given.has(flag.split('=')[0]!));
  for (const flag of applied) setFlagsFromString(flag);
  return applied;
}
