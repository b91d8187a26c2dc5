import { useEffect, useState } from 'preact/hooks';

const DARK = '(prefers-color-scheme: dark)';

/** Whether the reader's colour scheme is dark, re-rendering when it changes: a canvas does not follow the style sheet by itself. */
export function useDarkScheme(): boolean {
  const [dark, setDark] = useState(() => matchMedia(DARK).matches);
  useEffect(() => {
    const query = matchMedia(DARK);
    const changed = () => setDark(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
  }, []);
  return dark;
}
