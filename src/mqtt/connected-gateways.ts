import { randomUUID } from 'node:crypto';
import type { Store } from '../store/ports/index.js';
import { ConnectedSignals } from './connected-signals.js';
import type { GatewayConnection } from './gateway-connection.js';
import type { IngestLog } from './ingest.js';
import { PresencePublisher } from './presence-publisher.js';
import type { CloseReason } from './refusals.js';

/** How long the start waits for the signal listener before going on (it then keeps retrying, and /healthz says so). */
const SIGNALS_START_WAIT_MS = 10_000;

/**
 * The connection of each gateway connected to this instance, and the signals of every instance
 * (docs/gateways-mqtt.md "Several instances: signals"): a deleted gateway, or one whose
 * certificate was revoked, is disconnected wherever it is connected, and a gateway that connected
 * to another instance loses its older connection here. Which are connected here is published for
 * the alert rules (presence-publisher.ts).
 */
export class ConnectedGateways {
  private readonly instance = randomUUID();
  private readonly byGateway = new Map<string, GatewayConnection>();
  private signals: ConnectedSignals | undefined;
  private stopSignals: (() => void) | undefined;
  private stopResume: (() => void) | undefined;
  private readonly presence: PresencePublisher;

  constructor(
    private readonly store: Pick<Store, 'signals' | 'ingest' | 'presence'>,
    private readonly log: IngestLog,
    clock: () => number,
  ) {
    this.presence = new PresencePublisher(this.instance, store.presence, clock, log);
  }

  /**
   * Hears the signals; resolves once they are heard (PostgreSQL: LISTEN is set up), so that a
   * gateway deleted right after start is not missed, or after SIGNALS_START_WAIT_MS: a database
   * that fails meanwhile shows in /healthz instead.
   */
  async listen(): Promise<void> {
    const { signals } = this.store;
    this.stopSignals = signals.subscribe((signal) => {
      if (signal.kind === 'gateway-deleted') this.disconnect(signal.gateway_id, 'the gateway was deleted', 'administrative');
      else if (signal.kind === 'certificate-revoked') {
        if (this.byGateway.get(signal.gateway_id)?.session?.serial === signal.serial) this.disconnect(signal.gateway_id, `its certificate ${signal.serial} was revoked`, 'administrative');
      } else if (signal.kind === 'gateways-connected' && signal.instance !== this.instance) {
        for (const id of signal.gateway_ids) this.disconnect(id, 'the gateway connected to another instance', 'taken_over');
      }
    });
    // Signals sent while the listener was down were not heard: look up every connected gateway again.
    this.stopResume = signals.onResume(() => this.checkAgain());
    await Promise.race([signals.listening(), new Promise((resolve) => setTimeout(resolve, SIGNALS_START_WAIT_MS).unref())]);
    this.signals = new ConnectedSignals(this.instance, signals, this.log);
  }

  /** A gateway connected here: [MQTT-3.1.4-2], a second connection of the session closes the first; the other instances are told. */
  connected(gatewayId: string, connection: GatewayConnection): void {
    this.byGateway.get(gatewayId)?.close('taken_over');
    this.byGateway.set(gatewayId, connection);
    this.signals?.add(gatewayId);
    this.presence.connected(gatewayId);
  }

  /** A gateway's connection closed (unless a newer one replaced it). */
  disconnected(gatewayId: string, connection: GatewayConnection): void {
    if (this.byGateway.get(gatewayId) !== connection) return;
    this.byGateway.delete(gatewayId);
    this.presence.disconnected(gatewayId);
  }

  /** Stops hearing signals and telling others; this instance's connections are withdrawn. */
  close(): Promise<void> {
    this.stopSignals?.();
    this.stopResume?.();
    this.signals?.close();
    return this.presence.close();
  }

  private disconnect(gatewayId: string, reason: string, code: CloseReason): void {
    const connection = this.byGateway.get(gatewayId);
    if (!connection) return;
    this.log.info({ gateway_id: gatewayId, reason }, 'gateway disconnected by the service');
    connection.close(code);
  }

  private checkAgain(): void {
    for (const [id, connection] of this.byGateway) {
      const serial = connection.serial;
      this.store.ingest.connectingGateway(id, serial).then(
        (gateway) => {
          if (!gateway || gateway.deleted !== null) this.disconnect(id, 'the gateway was deleted', 'administrative');
          else if (gateway.certificate === 'revoked') this.disconnect(id, `its certificate ${serial} was revoked`, 'administrative');
        },
        () => undefined,
      );
    }
  }
}
