import { generateKeyPair as generateKeyPairCallback } from 'node:crypto';
import { promisify } from 'node:util';
import { ApiClient, ApiError, collectAll, seg, type CustomerApi } from '../client/api.js';
import { createCertificateRequest } from '../pki/csr.js';
import { certificateSerialOf, loadCredentials, saveCredentials, type GatewayCredentials } from './credentials.js';

const generateKeyPair = promisify(generateKeyPairCallback);

/** A gateway of the simulation with what it needs to connect. */
export interface SimulatedGateway {
  id: string;
  name: string;
  credentials: GatewayCredentials;
}

interface ApiGateway {
  id: string;
  name: string;
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
  const existing = new Map((await collectAll<ApiGateway>(session.client, `${session.base}/gateways`)).map((g) => [g.name, g]));
  const gateways: SimulatedGateway[] = [];
  for (let i = 1; i <= setup.count; i++) {
    const name = `${setup.prefix}-${i}`;
    let gateway = existing.get(name);
    if (!gateway) {
      gateway = await session.client.post<ApiGateway>(`${session.base}/gateways`, { name, usecase: setup.usecase, station: setup.station });
      setup.say(`Created gateway ${name} (${gateway.id}).`);
    }
    const stored = loadCredentials(session.client.baseUrl, gateway.id, setup.env);
    const credentials = stored ? await stillValid(session, gateway, stored, setup) : await provision(session, gateway, setup);
    gateways.push({ id: gateway.id, name, credentials });
  }
  return gateways;
}

interface ApiCertificate {
  serial: string;
  status: 'pending' | 'active' | 'revoked';
}

/**
 * The stored credentials while their certificate is the gateway's current one and not revoked;
 * otherwise (revoked, or replaced by a re-provisioning) new ones with --reprovision, else an error.
 */
async function stillValid(session: CustomerApi, gateway: ApiGateway, stored: GatewayCredentials, setup: GatewaySetup): Promise<GatewayCredentials> {
  let current: ApiCertificate;
  try {
    current = await session.client.get<ApiCertificate>(`${session.base}/gateways/${seg(gateway.id)}/certificate`);
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
  return redeem(session, gateway, await reprovisioning(session, gateway), setup, `Re-provisioned gateway ${gateway.name} (its certificate ${why})`);
}

const reprovisioning = (session: CustomerApi, gateway: ApiGateway) =>
  session.client.post<{ registration_path: string; token: string }>(`${session.base}/gateways/${seg(gateway.id)}/reprovision`);

async function provision(session: CustomerApi, gateway: ApiGateway, setup: GatewaySetup): Promise<GatewayCredentials> {
  let preparation: { registration_path: string; token: string };
  try {
    preparation = await session.client.post(`${session.base}/gateways/${seg(gateway.id)}/prepare-provisioning`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403 && /already/.test(error.details)) {
      if (setup.reprovision) return redeem(session, gateway, await reprovisioning(session, gateway), setup, `Re-provisioned gateway ${gateway.name}`);
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

/** What POST /provisioning answers the simulator (the PKCS#12 it ignores: the PEM certificates are all it needs). */
interface Provisioned {
  mqtt_endpoint: string;
  mqtt_topic_prefix: string;
  certificate_common_name: string;
  certificate: string;
  ca_certificate: string;
}

/**
 * Redeems the token as the device would, with a certificate request of a key made here (EC
 * P-256), which never leaves this machine; keeps the key with what it gets.
 */
async function redeem(
  session: CustomerApi,
  gateway: ApiGateway,
  preparation: { registration_path: string; token: string },
  setup: GatewaySetup,
  done: string,
): Promise<GatewayCredentials> {
  const { privateKey } = await generateKeyPair('ec', { namedCurve: 'prime256v1' });
  // The device's side: no Authorization header, only the token.
  const device = new ApiClient(session.client.baseUrl, undefined, { ca: session.client.ca });
  const provisioned = await device.post<Provisioned>(preparation.registration_path, {
    token: preparation.token,
    csr: createCertificateRequest(privateKey, gateway.id),
  });
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
