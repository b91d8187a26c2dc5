import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Command } from '../../../../src/client/commands';
import { isFinal } from '../../../../src/domain/commands';
import { api, customerPath } from '../../../lib/api';
import { COMMAND_POLL_MS, usePageVisible } from './use-page-visible';

/** Commands followed by a key (the scanner each was sent to), and the error of the last reading. */
export interface FollowedCommands {
  byKey: ReadonlyMap<string, Command>;
  error: unknown;
  /** Follows a command just sent, in place of the key's last one. */
  follow: (key: string, command: Command) => void;
}

/**
 * The last command sent per key, each read again (`GET /{customer_id}/commands/{id}`) every second
 * while any of them is not final, so that their states change on screen; not while the tab is
 * hidden, nor after a failed reading until the next command is sent.
 */
export function useFollowedCommands(): FollowedCommands {
  const [byKey, setByKey] = useState<ReadonlyMap<string, Command>>(new Map());
  const [error, setError] = useState<unknown>();
  const visible = usePageVisible();
  const follow = useCallback((key: string, command: Command) => {
    setError(undefined);
    setByKey((map) => new Map(map).set(key, command));
  }, []);
  const pending = [...byKey].filter(([, c]) => !isFinal(c.status));
  useEffect(() => {
    if (pending.length === 0 || !visible || error) return;
    let current = true;
    const timer = setTimeout(() => {
      Promise.all(pending.map(async ([key, c]) => [key, await api.get<Command>(customerPath(`/commands/${encodeURIComponent(c.command_id)}`))] as const)).then(
        (fresh) => {
          if (!current) return;
          // A command sent meanwhile for the same key stays: only the one read is replaced.
          setByKey((map) => {
            const next = new Map(map);
            for (const [key, command] of fresh) if (next.get(key)?.command_id === command.command_id) next.set(key, command);
            return next;
          });
        },
        (failure: unknown) => current && setError(failure),
      );
    }, COMMAND_POLL_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [byKey, visible, error]);
  return { byKey, error, follow };
}
