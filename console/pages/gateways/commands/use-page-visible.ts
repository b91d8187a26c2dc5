import { useEffect, useState } from 'preact/hooks';

/** Whether the tab is shown: a hidden tab stops polling, and polls again as soon as it is shown. */
export function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState === 'visible');
  useEffect(() => {
    const onChange = () => setVisible(document.visibilityState === 'visible');
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, []);
  return visible;
}

/**
 * How often a page reads again commands that are not final (QUEUED, DELIVERED): a gateway acts in
 * well under a second, so each change shows within one. Nothing is read while all are final.
 */
export const COMMAND_POLL_MS = 1000;
