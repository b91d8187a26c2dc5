import { useId, useState } from 'preact/hooks';
import type { Command } from '../../../../src/client/commands';
import { Button } from '../../../components/button';
import { ErrorMessage } from '../../../components/error-message';
import { KeysetPager } from '../../../components/keyset-pager';
import { StatusMessage } from '../../../components/status-message';
import { api, customerPath } from '../../../lib/api';
import { can } from '../../../lib/session';
import { commandSummary, sentSentence } from './command-input';
import { CommandForm } from './command-form';
import { CommandTable } from './command-table';
import { COMMAND_PAGE_SIZE, useCommandPages } from './use-command-pages';

/**
 * The gateway page's `Commands` region: the form to send one, and the gateway's commands as they
 * go. Both need gateway.command, reading them too (docs/commands.md "The API").
 */
export function CommandsPanel({ gatewayId, gatewayName }: { gatewayId: string; gatewayName: string }) {
  const headingId = useId();
  return (
    <section class="commands" aria-labelledby={headingId}>
      <h2 id={headingId}>Commands</h2>
      {can('gateway.command') ? (
        <GatewayCommands gatewayId={gatewayId} gatewayName={gatewayName} />
      ) : (
        <p class="notice">Your role does not allow sending commands or reading them (it needs the permission gateway.command); ask an administrator.</p>
      )}
    </section>
  );
}

/** The form and the pages of the gateway's commands, for a user with gateway.command. */
function GatewayCommands({ gatewayId, gatewayName }: { gatewayId: string; gatewayName: string }) {
  const list = useCommandPages(gatewayId);
  const [sentStatus, setSentStatus] = useState<string>();
  const [status, setStatus] = useState<string>();
  const [failure, setFailure] = useState<unknown>();
  const [canceling, setCanceling] = useState<string>();
  const sent = (command: Command) => {
    setFailure(undefined);
    setStatus(undefined);
    setSentStatus(sentSentence(command, gatewayName));
    list.first();
  };
  const cancel = async (command: Command) => {
    setCanceling(command.command_id);
    setFailure(undefined);
    setStatus(undefined);
    setSentStatus(undefined);
    try {
      list.replace(await api.post<Command>(customerPath(`/commands/${encodeURIComponent(command.command_id)}/cancel`)));
      setStatus(`Canceled ${commandSummary(command)}.`);
    } catch (error) {
      // 409: it left QUEUED meanwhile; the page read again shows where it is.
      setFailure(error);
      list.refresh();
    } finally {
      setCanceling(undefined);
    }
  };
  return (
    <>
      <div class="command-send">
        <h3>Send a command</h3>
        <CommandForm gatewayId={gatewayId} onSent={sent} />
        <StatusMessage text={sentStatus} />
      </div>
      <div class="section-heading">
        <h3>Sent commands</h3>
        <Button onClick={list.refresh}>Refresh commands</Button>
      </div>
      <StatusMessage text={status} />
      <ErrorMessage error={failure ?? list.error} />
      {list.commands === undefined && !list.error ? (
        <p class="loading">Loading commands…</p>
      ) : (
        list.commands && (
          <>
            <CommandTable commands={list.commands} onCancel={(c) => void cancel(c)} canceling={canceling} />
            {(list.page > 0 || list.hasNext) && (
              <KeysetPager page={list.page} pageSize={COMMAND_PAGE_SIZE} rows={list.commands.length} hasNext={list.hasNext} noun="Commands" onPrevious={list.previous} onNext={list.next} />
            )}
          </>
        )
      )}
    </>
  );
}
