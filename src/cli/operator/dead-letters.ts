import type { Command } from 'commander';
import type { DeadLetterSummary } from '../../store/ports/index.js';
import { CliError, Exit, formatTime, printList, type Column, type Io } from '../io.js';
import { withOperatorStore } from './store.js';
import { examples } from '../help.js';

const columns = (io: Io): Column<DeadLetterSummary>[] => [
  { header: 'SEQ', value: (d) => d.seq },
  { header: 'QUARANTINED', value: (d) => formatTime(io, d.quarantined) },
  { header: 'RECEIVED', value: (d) => formatTime(io, d.received) },
  { header: 'CUSTOMER', value: (d) => d.customer_id },
  { header: 'GATEWAY_ID', value: (d) => d.gateway_id },
  { header: 'BYTES', value: (d) => d.payload_bytes },
  { header: 'REASON', value: (d) => d.reason },
];

/** `scanhub operator dead-letters list|payload`: the MQTT messages quarantined for crashing the ingest writer. */
export function registerDeadLetterCommands(operator: Command): void {
  const deadLetters = operator
    .command('dead-letters')
    .description('MQTT messages quarantined because the ingest writer thread died with them (docs/gateways-mqtt.md)')
    .addHelpText('after', examples(['scanhub operator dead-letters list']));

  deadLetters
    .command('list')
    .addHelpText('after', examples(['scanhub operator dead-letters list']))
    .description('list the dead letters, oldest first (the payload by its size)')
    .action(async (_options: unknown, command: Command) => {
      await withOperatorStore(command, async (store, io) => printList(io, await store.deadLetters.list(), columns(io)));
    });

  deadLetters
    .command('payload <seq>')
    .addHelpText('after', examples(['scanhub operator dead-letters payload 17 > payload.bin']))
    .description('write the payload of one dead letter to stdout, byte for byte as the gateway sent it')
    .action(async (seq: string, _options: unknown, command: Command) => {
      if (!/^[1-9]\d{0,15}$/.test(seq)) throw new CliError(`"${seq}" is not a dead letter's seq (see \`scanhub operator dead-letters list\`)`, Exit.USAGE);
      await withOperatorStore(command, async (store) => {
        const payload = await store.deadLetters.payload(Number(seq));
        if (!payload) throw new CliError(`there is no dead letter ${seq}: see \`scanhub operator dead-letters list\``);
        process.stdout.write(payload);
      });
    });
}
