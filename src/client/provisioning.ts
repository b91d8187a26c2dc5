import type { ApiClient, CustomerApi } from './api.js';
import { gatewayPath, type Gateway } from './gateways.js';

/** What prepare-provisioning and reprovision return: where and with which single-use token a device registers. */
export interface Preparation {
  registration_path: string;
  token: string;
  /** The deployment's public URL joined with registration_path (an addition; older servers leave it out). */
  registration_url?: string;
}

/** What `POST /provisioning` answers the device that redeems its token. */
export interface Provisioned {
  mqtt_endpoint: string;
  mqtt_topic_prefix: string;
  certificate_common_name: string;
  gateway: Gateway;
  /** Base64 of a PKCS#12, empty password: with a certificate request, the two certificates only. */
  pkcs12: string;
  /** The gateway's client certificate and the deployment CA, PEM. */
  certificate: string;
  ca_certificate: string;
}

/** A gateway of a provisioning package: one that exists, or one to create by its name. */
export type PackageElement = { gateway_id: string } | { gateway_name: string };

/** The Wi-Fi the devices of a package join. */
export interface PackageWifi {
  ssid?: string;
  password?: string;
  authentication_type?: string;
}

/** What create-provisioning-package returns: one signed package link per gateway. */
export interface ProvisioningPackages {
  gateways: { gateway_id: string; package_url: string }[];
}

/** Issues the gateway's certificate and a single-use token for its device; once per gateway. */
export function prepareProvisioning(api: CustomerApi, gatewayId: string): Promise<Preparation> {
  return api.client.post<Preparation>(gatewayPath(api, gatewayId, 'prepare-provisioning'));
}

/** A new certificate and token for a replaced or reset device, same gateway id. */
export function reprovision(api: CustomerApi, gatewayId: string): Promise<Preparation> {
  return api.client.post<Preparation>(gatewayPath(api, gatewayId, 'reprovision'));
}

/** Prepares several gateways (existing or new) and returns a package link for each. */
export function createProvisioningPackages(api: CustomerApi, elements: PackageElement[], wifi?: PackageWifi): Promise<ProvisioningPackages> {
  return api.client.post<ProvisioningPackages>(`${api.base}/create-provisioning-package`, { gateways: elements, ...(wifi ? { wifi } : {}) });
}

/**
 * Redeems the token as the device does, with a PEM certificate request of the device's own key.
 * `device` sends no credentials: the token is its only proof.
 */
export function redeemToken(device: ApiClient, preparation: Preparation, csr: string): Promise<Provisioned> {
  return device.post<Provisioned>(preparation.registration_path, { token: preparation.token, csr });
}
