import { useCallback, useEffect, useState } from 'preact/hooks';
import { collectAll, customerPath } from '../../lib/api';

export interface AllOf<T> {
  items: T[] | undefined;
  error: unknown;
  /** Loads the list again (after a change). */
  reload: () => Promise<void>;
}

/**
 * Every item of a list of the customer bounded by nature (its users, its API keys: made by hand,
 * a few dozen), 500 a request (docs/console.md "Adding a page").
 */
export function useAll<T>(resource: string): AllOf<T> {
  const [items, setItems] = useState<T[]>();
  const [error, setError] = useState<unknown>();
  const reload = useCallback(async () => {
    try {
      setItems(await collectAll<T>(`${customerPath(resource)}?limit=500`));
      setError(undefined);
    } catch (failure) {
      setError(failure);
    }
  }, [resource]);
  useEffect(() => void reload(), [reload]);
  return { items, error, reload };
}
