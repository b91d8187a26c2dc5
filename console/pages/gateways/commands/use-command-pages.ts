import { useCallback, useEffect } from 'preact/hooks';
import type { Command } from '../../../../src/client/commands';
import { isFinal } from '../../../../src/domain/commands';
import { customerPath } from '../../../lib/api';
import { useKeysetPages, type KeysetPages } from '../../../lib/use-keyset-pages';
import { COMMAND_POLL_MS, usePageVisible } from './use-page-visible';

/** Commands on one page: the recent ones at a glance. */
export const COMMAND_PAGE_SIZE = 20;

/** The pages of a gateway's commands (KeysetPages), its rows, and a row changed in place. */
export interface CommandPages extends KeysetPages<Command> {
  commands: Command[] | undefined;
  /** Puts a command the page changed (canceled) in its row. */
  replace: (command: Command) => void;
}

/**
 * A gateway's commands a page at a time, newest first, by the API's keyset. While a command shown
 * is not final the page is read again every second, so that its state changes on screen; not
 * while the tab is hidden, nor after a failed reading (until `refresh`).
 */
export function useCommandPages(gatewayId: string): CommandPages {
  const pages = useKeysetPages<Command>(`${customerPath(`/gateways/${encodeURIComponent(gatewayId)}/commands`)}?limit=${COMMAND_PAGE_SIZE}`);
  const { shown, error, refresh, update } = pages;
  const visible = usePageVisible();
  const pending = Boolean(shown?.items.some((c) => !isFinal(c.status)));
  useEffect(() => {
    // The next reading a second after each answer (a new `shown`): never two at once.
    if (!pending || !visible || error) return;
    const timer = setTimeout(refresh, COMMAND_POLL_MS);
    return () => clearTimeout(timer);
  }, [shown, pending, visible, error, refresh]);
  const replace = useCallback(
    (command: Command) => update((page) => ({ ...page, items: page.items.map((c) => (c.command_id === command.command_id ? command : c)) })),
    [update],
  );
  return { ...pages, commands: shown?.items, replace };
}
