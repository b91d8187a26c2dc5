import { Command, Option } from 'commander';
import { seg } from '../client/api.js';
import { connect } from './connect.js';
import { registerCertificateCommands } from './gateway-certificates.js';
import { showPreparation, type Preparation } from './preparation-output.js';
import { readGatewayFile } from './gateway-file.js';
import { gatewayIdOf, gatewayIds } from './gateway-refs.js';
import { CliError, Exit, confirmAction, formatTime, printList, printObject, readStdin, success, type Column, type Io } from './io.js';
import { collectAll } from '../client/api.js';

/** A gateway as the API returns it (spec 2.1). */
export interface Gateway {
  id: string;
  model: string;
  manufacturer: string;
  class: string;
  type: string;
  firmware: string;
  created: number;
  last_updated: number;
  usecase: string;
  station: string;
  thing_name: string;
  name: string;
  connectivity_status: string;
}

/** The bulk-create limit of the API: larger files are refused rather than sent in parts. */
const BULK_CREATE_MAX = 500;

const columns = (io: Io): Column<Gateway>[] => [
  { header: 'ID', value: (g) => g.id },
  { header: 'NAME', value: (g) => g.name },
  { header: 'USECASE', value: (g) => g.usecase },
  { header: 'STATION', value: (g) => g.station },
  { header: 'STATUS', value: (g) => g.connectivity_status },
  { header: 'CREATED', value: (g) => formatTime(io, g.created) },
];

const fields = (io: Io, version?: string): Column<Gateway>[] => [
  { header: 'id', value: (g) => g.id },
  { header: 'name', value: (g) => g.name },
  { header: 'usecase', value: (g) => g.usecase },
  { header: 'station', value: (g) => g.station },
  { header: 'type', value: (g) => g.type },
  { header: 'connectivity_status', value: (g) => g.connectivity_status },
  { header: 'model', value: (g) => g.model },
  { header: 'manufacturer', value: (g) => g.manufacturer },
  { header: 'firmware', value: (g) => g.firmware },
  { header: 'thing_name', value: (g) => g.thing_name },
  { header: 'created', value: (g) => formatTime(io, g.created) },
  { header: 'last_updated', value: (g) => formatTime(io, g.last_updated) },
  ...(version !== undefined ? [{ header: 'version', value: () => version }] : []),
];

/** The version inside an ETag (`"3"` -> `3`). */
function versionOf(etag: unknown): string | undefined {
  return typeof etag === 'string' ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined;
}

/** `scanhub gateways list|get|create|update|delete|bulk-create|provision|package|certificate|revoke|reprovision`. */
export function registerGatewayCommands(program: Command): void {
  const gateways = program.command('gateways').description('gateways (connectivity devices) and their provisioning');

  gateways
    .command('list')
    .description('list the gateways')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await collectAll<Gateway>(session.client, `${session.base}/gateways`), columns(session.io));
    });

  gateways
    .command('get <gateway>')
    .description('show one gateway (by id, thing name or name), with its version for --if-match')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const response = await session.client.request<Gateway>('GET', `${session.base}/gateways/${seg(gatewayId)}`);
      printObject(session.io, response.body, fields(session.io, versionOf(response.headers.etag)));
    });

  gateways
    .command('create')
    .description('create a gateway')
    .requiredOption('--name <name>', 'displayed name, unique within the customer')
    .requiredOption('--usecase <usecase>', 'use case')
    .requiredOption('--station <station>', 'station name')
    .action(async (options: { name: string; usecase: string; station: string }, command: Command) => {
      const session = await connect(command);
      const body = { name: options.name, usecase: options.usecase, station: options.station };
      const response = await session.client.request<Gateway>('POST', `${session.base}/gateways`, { body });
      const gateway = response.body;
      printObject(session.io, gateway, fields(session.io, versionOf(response.headers.etag)));
      success(session.io, `Created gateway "${gateway.name}" (${gateway.id}); provision it with \`scanhub gateways provision ${gateway.id}\`.`);
    });

  gateways
    .command('update <gateway>')
    .description('change name, use case or station')
    .option('--name <name>', 'new displayed name')
    .option('--usecase <usecase>', 'new use case')
    .option('--station <station>', 'new station')
    .option('--if-match <version>', 'change only if the gateway is still at this version (from `gateways get`)')
    .action(async (ref: string, options: { name?: string; usecase?: string; station?: string; ifMatch?: string }, command: Command) => {
      const session = await connect(command);
      const body = Object.fromEntries(
        (['name', 'usecase', 'station'] as const).filter((f) => options[f] !== undefined).map((f) => [f, options[f]]),
      );
      if (Object.keys(body).length === 0) throw new CliError('nothing to change: pass --name, --usecase or --station', Exit.USAGE);
      const headers: Record<string, string> = {};
      if (options.ifMatch !== undefined) headers['if-match'] = `"${options.ifMatch.replace(/"/g, '')}"`;
      const gatewayId = await gatewayIdOf(session, ref);
      const response = await session.client.request<Gateway>('PATCH', `${session.base}/gateways/${seg(gatewayId)}`, { body, headers });
      const version = versionOf(response.headers.etag);
      printObject(session.io, response.body, fields(session.io, version));
      success(session.io, `Updated gateway "${response.body.name}" (${response.body.id}), now at version ${version}.`);
    });

  gateways
    .command('delete <gateway>')
    .description('delete a gateway (by id or name): its certificate stops working')
    .option('--yes', 'do not ask for confirmation')
    .action(async (ref: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      await confirmAction(session.io, `Delete gateway ${gatewayId}? Its device can no longer connect.`, options.yes);
      await session.client.delete(`${session.base}/gateways/${seg(gatewayId)}`);
      success(session.io, `Deleted gateway ${gatewayId}.`);
    });

  gateways
    .command('bulk-create')
    .description(`create up to ${BULK_CREATE_MAX} gateways from a file, all or none`)
    .requiredOption('--file <file>', 'CSV with the header row name,usecase,station, or JSON (an array of {name, usecase, station})')
    .action(async (options: { file: string }, command: Command) => {
      const session = await connect(command);
      const drafts = readGatewayFile(options.file);
      if (drafts.length > BULK_CREATE_MAX) {
        throw new CliError(`${options.file} lists ${drafts.length} gateways; at most ${BULK_CREATE_MAX} are created at once: split the file`, Exit.USAGE);
      }
      const created = await session.client.post<Gateway[]>(`${session.base}/gateways/bulk-create`, { gateways: drafts });
      printList(session.io, created, columns(session.io));
      success(session.io, `Created ${created.length} gateway${created.length === 1 ? '' : 's'}.`);
    });

  registerProvisioningCommands(gateways);
  registerCertificateCommands(gateways);
}

/** `gateways provision` and `gateways package`. */
function registerProvisioningCommands(gateways: Command): void {
  gateways
    .command('provision <gateway>')
    .description('issue the gateway certificate and a single-use token (24 h) for the device (by id or name); once per gateway')
    .option('--qr', 'print the token as a QR code even when stdout is not a terminal')
    .action(async (ref: string, options: { qr?: boolean }, command: Command) => {
      const session = await connect(command);
      const gatewayId = await gatewayIdOf(session, ref);
      const preparation = await session.client.post<Preparation>(`${session.base}/gateways/${seg(gatewayId)}/prepare-provisioning`);
      await showPreparation(session, preparation, options.qr, (url) => `Gateway ${gatewayId} is ready: the device sends the token to ${url} within 24 hours.`);
    });

  gateways
    .command('package')
    .description('prepare several gateways (existing or new) and print one signed package link (24 h) each')
    .option('--gateway <gateway...>', 'existing gateway to include, by id or name (repeatable)')
    .option('--new <name...>', 'new gateway to create and include (repeatable; use case "default", station = name)')
    .option('--wifi-ssid <ssid>', 'Wi-Fi network the devices join')
    .option('--wifi-password-stdin', 'read the Wi-Fi password from stdin')
    .addOption(new Option('--wifi-auth <type>', 'Wi-Fi authentication type, e.g. WPA2-PSK'))
    .action(async (options: { gateway?: string[]; new?: string[]; wifiSsid?: string; wifiPasswordStdin?: boolean; wifiAuth?: string }, command: Command) => {
      const session = await connect(command);
      const elements = [
        ...(await gatewayIds(session, options.gateway ?? [])).map((gateway_id) => ({ gateway_id })),
        ...(options.new ?? []).map((gateway_name) => ({ gateway_name })),
      ];
      if (elements.length === 0) throw new CliError('no gateways: pass --gateway ID or --new NAME', Exit.USAGE);
      const wifi: Record<string, string> = {};
      if (options.wifiSsid !== undefined) wifi.ssid = options.wifiSsid;
      if (options.wifiPasswordStdin) wifi.password = await readStdin();
      if (options.wifiAuth !== undefined) wifi.authentication_type = options.wifiAuth;
      const body = { gateways: elements, ...(Object.keys(wifi).length ? { wifi } : {}) };
      const result = await session.client.post<{ gateways: { gateway_id: string; package_url: string }[] }>(
        `${session.base}/create-provisioning-package`,
        body,
      );
      if (session.io.json) return session.io.out(JSON.stringify(result, null, 2));
      printList(session.io, result.gateways, [
        { header: 'GATEWAY_ID', value: (p) => p.gateway_id },
        { header: 'PACKAGE_URL', value: (p) => p.package_url },
      ]);
      success(session.io, `Prepared ${result.gateways.length} gateway${result.gateways.length === 1 ? '' : 's'}; each link works for 24 hours.`);
    });
}
