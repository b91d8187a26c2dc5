import { setFlagsFromString } from 'node:v8';

/**
 * V8's collector settings `serve` runs with (docs/operations.md "Tuning: V8's heap for large
 * fleets"): a heap that grows by a few kilobytes per connection, as in a reconnect storm, is grown
 * to 4x what survived and marked later, for less CPU per connection at a little more memory
 * (bench/README.md "reconnect-storm"). V8 reads them at every limit it computes, so they work when
 * set at run time; a flag given on node's command line is left as given.
 */
export const SERVE_HEAP_FLAGS: readonly string[] = ['--heap-growing-percent=300', '--incremental-marking-soft-trigger=90', '--incremental-marking-hard-trigger=95'];

/** Applies SERVE_HEAP_FLAGS but those node was started with (`execArgv`); returns the flags it set. */
export function tuneServeHeap(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(execArgv.map((arg) => arg.split('=')[0]!.replace(/_/g, '-')));
  const applied = SERVE_HEAP_FLAGS.filter((flag) => !given.has(flag.split('=')[0]!));
  for (const flag of applied) setFlagsFromString(flag);
  return applied;
}
