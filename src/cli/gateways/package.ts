import { Option, type Command } from 'commander';
import { createProvisioningPackages, type PackageElement, type PackageWifi } from '../../client/provisioning.js';
import { gatewayIds } from '../gateway-refs.js';
import { CliError, Exit, printList, readStdin, success } from '../io.js';
import { connect } from '../session.js';
import { examples } from '../help.js';

interface PackageOptions {
  gateway?: string[];
  new?: string[];
  wifiSsid?: string;
  wifiPasswordStdin?: boolean;
  wifiAuth?: string;
}

/** `scanhub gateways package`: one signed package link per gateway. */
export function registerPackageCommand(gateways: Command): void {
  gateways
    .command('package')
    .addHelpText('after', examples(['scanhub gateways package --new dock-3 dock-4 --wifi-ssid warehouse --wifi-password-stdin < wifi-password.txt']))
    .description('prepare several gateways (existing or new) and print one signed package link (24 h) each')
    .option('--gateway <gateway...>', 'existing gateway to include, by id or name (repeatable)')
    .option('--new <name...>', 'new gateway to create and include (repeatable; use case "default", station = name)')
    .option('--wifi-ssid <ssid>', 'Wi-Fi network the devices join')
    .option('--wifi-password-stdin', 'read the Wi-Fi password from stdin')
    .addOption(new Option('--wifi-auth <type>', 'Wi-Fi authentication type, e.g. WPA2-PSK'))
    .action(async (options: PackageOptions, command: Command) => {
      const session = await connect(command);
      const elements: PackageElement[] = [
        ...(await gatewayIds(session, options.gateway ?? [])).map((gateway_id) => ({ gateway_id })),
        ...(options.new ?? []).map((gateway_name) => ({ gateway_name })),
      ];
      if (elements.length === 0) throw new CliError('no gateways: pass --gateway ID or --new NAME', Exit.USAGE);
      const wifi: PackageWifi = {};
      if (options.wifiSsid !== undefined) wifi.ssid = options.wifiSsid;
      if (options.wifiPasswordStdin) wifi.password = await readStdin();
      if (options.wifiAuth !== undefined) wifi.authentication_type = options.wifiAuth;
      const result = await createProvisioningPackages(session, elements, Object.keys(wifi).length ? wifi : undefined);
      if (session.io.json) return session.io.out(JSON.stringify(result, null, 2));
      printList(session.io, result.gateways, [
        { header: 'GATEWAY_ID', value: (p) => p.gateway_id },
        { header: 'PACKAGE_URL', value: (p) => p.package_url },
      ]);
      success(session.io, `Prepared ${result.gateways.length} gateway${result.gateways.length === 1 ? '' : 's'}; each link works for 24 hours.`);
    });
}
