// The order of the writes of command delivery (src/mqtt/commands/delivery.ts): on PostgreSQL one
// at a time (two overlapping multi-row UPDATEs deadlocked); where the store runs them in order
// itself (SQLite's writer, which holds PUBACKs up to HOLD_MS), each goes to it at once: a claim
// does not wait behind a PUBACK still held.
import { expect, it } from 'vitest';
import type { CommandRecord } from '../../../src/domain/commands.js';
import { CommandDelivery, newCommandStats } from '../../../src/mqtt/commands/delivery.js';
import type { IngestLog } from '../../../src/mqtt/ingest.js';
import type { Store } from '../../../src/store/ports/index.js';

const GATEWAY = 'aaaaaaaa-0000-4000-8000-000000000001';
const T0 = 1_800_000_000_000;
const log = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as IngestLog;
const command = (seq: number): CommandRecord =>
  ({ seq, id: `c${seq}`, customer_id: 'acme', gateway_id: GATEWAY, device_id: null, name: 'feedback', parameters: '{}', status: 'QUEUED', created: T0, last_updated: T0, expires_at: T0 + 60_000, delivered_at: null, completed_at: null, details: null, attempts: 1 }) as CommandRecord;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A store whose PUBACK writes never finish (held), counting claims; `ordered`: it has routeWrites (SQLite in serve). */
function fakeStore(ordered: boolean) {
  const calls: string[] = [];
  let queued = [command(1)];
  const commands = {
    claim: async () => {
      calls.push('claim');
      const claimed = queued;
      queued = [];
      return [claimed];
    },
    delivered: () => (calls.push('delivered'), new Promise<CommandRecord[]>(() => undefined)),
    ...(ordered ? { routeWrites: () => undefined } : {}),
  };
  const store = { commands, signals: { subscribe: () => () => undefined, onResume: () => () => undefined } } as unknown as Pick<Store, 'commands' | 'signals'>;
  return { store, calls, queue: (seq: number) => queued.push(command(seq)) };
}

async function claimsBehindAHeldPuback(ordered: boolean): Promise<string[]> {
  const { store, calls, queue } = fakeStore(ordered);
  const delivery = new CommandDelivery(store, () => T0, log, newCommandStats());
  const sent: Buffer[] = [];
  const connection = { send: (packet: Buffer) => sent.push(packet), protocolLevel: 4 };
  delivery.subscribed(GATEWAY, `scanhub/acme/gateway/${GATEWAY}/commands`, connection, 1, true);
  await nextTurn();
  await nextTurn();
  expect(sent.length).toBe(1);
  delivery.acknowledged(GATEWAY, connection, 1);
  await new Promise((resolve) => setTimeout(resolve, ordered ? 5 : 60));
  // A command queued meanwhile: its signal wakes the outbox.
  queue(2);
  (delivery as unknown as { outboxes: Map<string, { wake(): void }> }).outboxes.get(GATEWAY)!.wake();
  await nextTurn();
  await nextTurn();
  delivery.close();
  return calls;
}

it('where the store orders the writes itself, a claim goes to it while a PUBACK is still held', async () => {
  expect(await claimsBehindAHeldPuback(true)).toEqual(['claim', 'delivered', 'claim']);
});

it('otherwise (PostgreSQL) a claim waits for the PUBACK write before it', async () => {
  expect(await claimsBehindAHeldPuback(false)).toEqual(['claim', 'delivered']);
});
