import { MAX_BULK_COMMANDS, type ApiCommand, type CommandInput, type CommandStatus } from '../domain/commands.js';
import { collectAll, seg, type CustomerApi } from './api.js';

/** A command as the API returns it (docs/commands.md). */
export type Command = ApiCommand;
export type { CommandInput, CommandStatus };

/** The path of a gateway's commands. */
export const gatewayCommandsPath = (api: CustomerApi, gatewayId: string) => `${api.base}/gateways/${seg(gatewayId)}/commands`;

/** The path of one command. */
export const commandPath = (api: CustomerApi, commandId: string) => `${api.base}/commands/${seg(commandId)}`;

/** Queues a command for one gateway. */
export function createCommand(api: CustomerApi, gatewayId: string, input: CommandInput): Promise<Command> {
  return api.client.post<Command>(gatewayCommandsPath(api, gatewayId), input);
}

/** Queues one command per gateway, in calls of at most 1,000 gateways (each all or none). */
export async function createCommands(api: CustomerApi, gatewayIds: string[], input: CommandInput): Promise<Command[]> {
  const created: Command[] = [];
  for (let i = 0; i < gatewayIds.length; i += MAX_BULK_COMMANDS) {
    created.push(...(await api.client.post<Command[]>(`${api.base}/commands`, { gateway_ids: gatewayIds.slice(i, i + MAX_BULK_COMMANDS), ...input })));
  }
  return created;
}

/** Every command of the gateway, newest first. */
export function listGatewayCommands(api: CustomerApi, gatewayId: string): Promise<Command[]> {
  return collectAll<Command>(api.client, gatewayCommandsPath(api, gatewayId));
}

export function getCommand(api: CustomerApi, commandId: string): Promise<Command> {
  return api.client.get<Command>(commandPath(api, commandId));
}

/** QUEUED -> CANCELED (409 once it is no longer QUEUED). */
export function cancelCommand(api: CustomerApi, commandId: string): Promise<Command> {
  return api.client.post<Command>(`${commandPath(api, commandId)}/cancel`);
}
