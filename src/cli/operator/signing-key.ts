import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { ID_TOKEN_LIFETIME_SECONDS, KEY_REFRESH_MS, SUPERSEDED_KEY_KEEP_MS } from '../../auth/idtoken.js';
import { rotateStoredSigningKeys } from '../../auth/signing-keys.js';
import { operatorAuditEntry } from '../../domain/audit.js';
import { printObject, success } from '../io.js';
import { withOperatorStore } from './store.js';

/** `scanhub operator rotate-signing-key`: a new IdToken signing key, the old ones verifying until their tokens expire. */
export function registerSigningKeyCommand(operator: Command): void {
  operator
    .command('rotate-signing-key')
    .description(
      'sign IdTokens with a new key from now on; tokens of the older keys stay valid until they expire (works while `serve` runs: instances sign with the new key within a second)',
    )
    .addHelpText('after', '\nExample:\n  scanhub operator rotate-signing-key --data-dir /var/lib/scanhub')
    .action(async (_options: unknown, command: Command) => {
      await withOperatorStore(command, async (store, io) => {
        const now = Date.now();
        // Every customer's tokens are signed with the deployment's key: each audit log records it.
        const rotation = await rotateStoredSigningKeys(store.secrets, now, SUPERSEDED_KEY_KEEP_MS, ({ added, keys, dropped }, customerIds) =>
          customerIds.map((customerId) =>
            operatorAuditEntry(randomUUID(), customerId, now, 'signing_key.rotated', { type: 'signing_key', id: added.jwk.kid }, {
              verifying: keys.map((key) => key.jwk.kid),
              dropped,
            }),
          ),
        );
        const { added, keys, dropped } = rotation;
        const result = { kid: added.jwk.kid, created: added.created, verifying: keys.map((key) => key.jwk.kid), dropped };
        printObject(io, result, [
          { header: 'kid', value: (r) => r.kid },
          { header: 'verifying', value: (r) => r.verifying.join(',') },
          { header: 'dropped', value: (r) => r.dropped.join(',') },
        ]);
        success(
          io,
          `New IdTokens are signed with key ${added.jwk.kid}: running instances take it up within ${KEY_REFRESH_MS / 1000} second; tokens of the older keys stay valid until they expire (at most ${ID_TOKEN_LIFETIME_SECONDS / 60} minutes).`,
        );
      });
    });
}
