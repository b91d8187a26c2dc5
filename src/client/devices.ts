import type { ApiDevice, DeviceStatus } from '../domain/devices.js';
import { collectAll, seg, type CustomerApi, type List } from './api.js';

/** A scanner as the API returns it (docs/devices.md): values never reported are null; status at the time of the request. */
export type Device = ApiDevice;
export type { DeviceStatus };

/** The filters of the device list (each left out matches every device). */
export interface DeviceQuery {
  /** The gateway that relayed the device's newest event. */
  gateway_id?: string;
  status?: DeviceStatus;
  /** A last reported battery below this (0..100). */
  battery_below?: number;
  limit?: number;
}

/** A page of the device list (spec 2.3). */
export interface DevicePage extends List<Device> {
  metadata: { description: string; size: number; filters: { name: string; value: string | number }[] };
}

/** The path of the customer's devices. */
export const devicesPath = (api: CustomerApi) => `${api.base}/devices`;

/** The path of one device. */
export const devicePath = (api: CustomerApi, deviceId: string) => `${devicesPath(api)}/${seg(deviceId)}`;

/** The first page of the customer's devices that match; links.next continues it. */
export function listDevicePage(api: CustomerApi, query: DeviceQuery = {}): Promise<DevicePage> {
  return api.client.get<DevicePage>(devicesPath(api), { ...query });
}

/** Every device of the customer that matches, all pages. */
export function listDevices(api: CustomerApi, query: DeviceQuery = {}): Promise<Device[]> {
  return collectAll<Device>(api.client, devicesPath(api), { ...query });
}

/** One device, by its exact id. */
export function getDevice(api: CustomerApi, deviceId: string): Promise<Device> {
  return api.client.get<Device>(devicePath(api, deviceId));
}
