import { generateKeyPair as generateKeyPairCallback } from 'node:crypto';
import { promisify } from 'node:util';
import { ApiClient, ApiError, type CustomerApi } from '../client/api.js';
import { getCertificate, type GatewayCertificate } from '../client/certificates.js';
import { createGateway, listGateways, type Gateway } from '../client/gateways.js';
import { prepareProvisioning, redeemToken, reprovision, type Preparation } from '../client/provisioning.js';
import { createCertificateRequest } from '../pki/csr.js';
import { certificateSerialOf, loadCredentials, saveCredentials, type GatewayCredentials } from './credentials.js';

const generateKeyPair = promisify(generateKeyPairCallback);

/** A gateway of the simulation with what it needs to connect. */
export interface SimulatedGateway {
  id: string;
  name: string;
  credentials: GatewayCredentials;
}

export interface GatewaySetup {
  prefix: string;
  count: number;
  usecase: string;
  station: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Re-provision (same gateway id, new key and certificate) a gateway whose certificate was
   * revoked or replaced, or that was provisioned elsewhere; without it such a gateway is an error.
   */
  reprovision?: boolean;
  /** Status lines ("Created gateway sim-1 ..."). */
  say: (message: string) => void;
}

/**
 * Gateways `{prefix}-1` ... `{prefix}-{count}`: reused when they exist, created otherwise, and
 * provisioned (prepare-provisioning, then POST /provisioning as the device would) unless the
 * simulator already holds their credentials from an earlier run.
 */
export async function setUpGateways(session: CustomerApi, setup: GatewaySetup): Promise<SimulatedGateway[]> {
  const existing = new Map((await listGateways(session)).map((g) => [g.name, g]));
  const gateways: SimulatedGateway[] = [];
  for (let i = 1; i <= setup.count; i++) {
    const name = `${setup.prefix}-${i}`;
    let gateway = existing.get(name);
    if (!gateway) {
      ({ gateway } = await createGateway(session, { name, usecase: setup.usecase, station: setup.station }));
      setup.say(`Created gateway ${name} (${gateway.id}).`);
    }
    const stored = loadCredentials(session.client.baseUrl, gateway.id, setup.env);
    const credentials = stored ? await stillValid(session, gateway, stored, setup) : await provision(session, gateway, setup);
    gateways.push({ id: gateway.id, name, credentials });
  }
  return gateways;
}

/**
 * The stored credentials while their certificate is the gateway's current one and not revoked;
 * otherwise (revoked, or replaced by a re-provisioning) new ones with --reprovision, else an error.
 */
async function stillValid(session: CustomerApi, gateway: Gateway, stored: GatewayCredentials, setup: GatewaySetup): Promise<GatewayCredentials> {
  let current: GatewayCertificate;
  try {
    current = await getCertificate(session, gateway.id);
  } catch (error) {
    // A deployment without certificate status (older), or a caller without gateway.provision: connect and see.
    if (error instanceof ApiError && (error.status === 404 || error.status === 403)) return stored;
    throw error;
  }
  const ours = BigInt(`0x${certificateSerialOf(stored)}`) === BigInt(`0x${current.serial}`);
  if (ours && current.status !== 'revoked') return stored;
  const why = ours ? 'was revoked' : 'was replaced by a re-provisioning';
  if (!setup.reprovision) {
    throw new Error(
      `the certificate this simulator holds for gateway ${gateway.name} (${gateway.id}) ${why}, so the broker refuses it: ` +
        `run again with --reprovision to give the simulated device a new one`,
    );
  }
  return redeem(session, gateway, await reprovision(session, gateway.id), setup, `Re-provisioned gateway ${gateway.name} (its certificate ${why})`);
}

async function provision(session: CustomerApi, gateway: Gateway, setup: GatewaySetup): Promise<GatewayCredentials> {
  let preparation: Preparation;
  try {
    preparation = await prepareProvisioning(session, gateway.id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403 && /already/.test(error.details)) {
      if (setup.reprovision) return redeem(session, gateway, await reprovision(session, gateway.id), setup, `Re-provisioned gateway ${gateway.name}`);
      throw new Error(
        `gateway ${gateway.name} (${gateway.id}) was provisioned before, but not by this simulator on this machine, so its certificate is elsewhere: ` +
          `delete it (\`scanhub gateways delete ${gateway.id}\`), pick another --prefix, or take it over with --reprovision (the other device's certificate is then revoked)`,
        { cause: error },
      );
    }
    throw error;
  }
  return redeem(session, gateway, preparation, setup, `Provisioned gateway ${gateway.name}`);
}

/**
 * Redeems the token as the device would, with a certificate request of a key made here (EC
 * P-256), which never leaves this machine; keeps the key with what it gets.
 */
async function redeem(
  session: CustomerApi,
  gateway: Gateway,
  preparation: Preparation,
  setup: GatewaySetup,
  done: string,
): Promise<GatewayCredentials> {
  const { privateKey } = await generateKeyPair('ec', { namedCurve: 'prime256v1' });
  // The device's side: no Authorization header, only the token.
  const device = new ApiClient(session.client.baseUrl, undefined, { ca: session.client.ca });
  // The PKCS#12 of the answer is left aside: the PEM certificates are all the simulator needs.
  const provisioned = await redeemToken(device, preparation, createCertificateRequest(privateKey, gateway.id));
  const credentials: GatewayCredentials = {
    gateway_id: gateway.id,
    mqtt_endpoint: provisioned.mqtt_endpoint,
    mqtt_topic_prefix: provisioned.mqtt_topic_prefix,
    certificate_common_name: provisioned.certificate_common_name,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    certificate: provisioned.certificate,
    ca_certificate: provisioned.ca_certificate,
  };
  const file = saveCredentials(session.client.baseUrl, credentials, setup.env);
  setup.say(`${done}; its certificate is kept in ${file}.`);
  return credentials;
}
