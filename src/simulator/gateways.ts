import { ApiClient, ApiError, collectAll, seg, type CustomerApi } from '../client/api.js';
import { loadCredentials, saveCredentials, type GatewayCredentials } from './credentials.js';

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
    const credentials = loadCredentials(session.client.baseUrl, gateway.id, setup.env) ?? (await provision(session, gateway, setup));
    gateways.push({ id: gateway.id, name, credentials });
  }
  return gateways;
}

async function provision(session: CustomerApi, gateway: ApiGateway, setup: GatewaySetup): Promise<GatewayCredentials> {
  let preparation: { registration_path: string; token: string };
  try {
    preparation = await session.client.post(`${session.base}/gateways/${seg(gateway.id)}/prepare-provisioning`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 403 && /already/.test(error.details)) {
      throw new Error(
        `gateway ${gateway.name} (${gateway.id}) was provisioned before, but not by this simulator on this machine, so its certificate is elsewhere: ` +
          `delete it (\`scanhub gateways delete ${gateway.id}\`) or pick another --prefix`,
        { cause: error },
      );
    }
    throw error;
  }
  // The device's side: no Authorization header, only the token.
  const device = new ApiClient(session.client.baseUrl, undefined, { ca: session.client.ca });
  const provisioned = await device.post<Omit<GatewayCredentials, 'gateway_id'>>(preparation.registration_path, { token: preparation.token });
  const credentials: GatewayCredentials = {
    gateway_id: gateway.id,
    mqtt_endpoint: provisioned.mqtt_endpoint,
    mqtt_topic_prefix: provisioned.mqtt_topic_prefix,
    certificate_common_name: provisioned.certificate_common_name,
    pkcs12: provisioned.pkcs12,
  };
  const file = saveCredentials(session.client.baseUrl, credentials, setup.env);
  setup.say(`Provisioned gateway ${gateway.name}; its certificate is kept in ${file}.`);
  return credentials;
}
