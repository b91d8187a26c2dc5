import { useCallback, useEffect, useState } from 'preact/hooks';
import type { List } from '../../src/client/api';
import { api } from './api';

export interface KeysetPages<T> {
  /** The page shown: undefined until the first answer. */
  shown: List<T> | undefined;
  /** Zero-based number of the page shown. */
  page: number;
  hasNext: boolean;
  error: unknown;
  next: () => void;
  previous: () => void;
  /** Reads the page shown again. */
  refresh: () => void;
  /** Goes back to the first page and reads it again. */
  first: () => void;
  /** Changes the page shown in place (a row an action changed). */
  update: (change: (page: List<T>) => List<T>) => void;
}

/**
 * A list the API pages by keyset (`links.next`), a page at a time from `firstPath`. Only the paths
 * of the pages passed are kept, for `previous`: one page of rows in memory. A new `firstPath` (a
 * filter changed) starts again at its first page.
 */
export function useKeysetPages<T>(firstPath: string): KeysetPages<T> {
  // The path of every page up to the one shown; the last is shown.
  const [trail, setTrail] = useState<string[]>(() => [firstPath]);
  const [shown, setShown] = useState<List<T>>();
  const [error, setError] = useState<unknown>();
  const [reads, setReads] = useState(0);
  useEffect(() => setTrail([firstPath]), [firstPath]);
  const path = trail[trail.length - 1]!;
  useEffect(() => {
    const controller = new AbortController();
    api.get<List<T>>(path, { signal: controller.signal }).then(
      (page) => {
        setShown(page);
        setError(undefined);
      },
      (failure: unknown) => {
        if ((failure as Error).name !== 'AbortError') setError(failure);
      },
    );
    return () => controller.abort();
  }, [path, reads]);
  const next = useCallback(() => {
    if (shown?.links.next) setTrail((pages) => [...pages, shown.links.next!]);
  }, [shown]);
  const previous = useCallback(() => setTrail((pages) => (pages.length > 1 ? pages.slice(0, -1) : pages)), []);
  const refresh = useCallback(() => setReads((n) => n + 1), []);
  const first = useCallback(() => {
    setTrail((pages) => (pages.length > 1 ? pages.slice(0, 1) : pages));
    setReads((n) => n + 1);
  }, []);
  const update = useCallback((change: (page: List<T>) => List<T>) => setShown((page) => page && change(page)), []);
  return { shown, page: trail.length - 1, hasNext: Boolean(shown?.links.next), error, next, previous, refresh, first, update };
}
