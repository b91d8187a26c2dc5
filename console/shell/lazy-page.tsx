import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message';
import type { PageEntry } from '../pages';

/** Pages loaded so far: going back to one shows it at once. */
const loaded = new Map<string, FunctionComponent>();

/** Shows a page, loading its chunk first when it is the page's first visit. */
export function LazyPage({ page }: { page: PageEntry }) {
  const [component, setComponent] = useState<FunctionComponent | undefined>(() => loaded.get(page.path));
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (loaded.has(page.path)) return setComponent(() => loaded.get(page.path));
    let current = true;
    page.load().then(
      (made) => {
        loaded.set(page.path, made);
        if (current) setComponent(() => made);
      },
      () => current && setError(new Error(`The ${page.title} page could not be loaded (the console may have been updated): reload the page.`)),
    );
    return () => {
      current = false;
    };
  }, [page]);
  if (error) return <ErrorMessage error={error} />;
  const Page = component;
  return Page ? <Page /> : <p class="loading">Loading…</p>;
}
