import type { MqttClient } from 'mqtt';

/** The commands a simulated gateway knows; it answers FAILED to any other name. */
const KNOWN = new Set(['feedback', 'display', 'configure']);

/** A command as the simulator printed it. */
export interface ReceivedCommand {
  gateway: string;
  command_id: string;
  name: string;
  device_id?: string;
  parameters: unknown;
  status: 'SUCCEEDED' | 'FAILED';
}

/**
 * Subscribes a simulated gateway to its command topic (docs/commands.md) and answers each command
 * once on `command-responses`: SUCCEEDED for a name it knows, FAILED otherwise. A command sent
 * again (DUP, after a reconnect) is answered again only if it was not answered on this run.
 */
export async function answerCommands(client: MqttClient, gatewayName: string, topic: string, onCommand: (command: ReceivedCommand) => void): Promise<void> {
  const answered = new Set<string>();
  client.on('message', (received, payload) => {
    if (received !== `${topic}/commands`) return;
    let command: { command_id?: unknown; name?: unknown; device_id?: unknown; parameters?: unknown };
    try {
      command = JSON.parse(payload.toString('utf8')) as typeof command;
    } catch {
      return;
    }
    if (typeof command.command_id !== 'string' || typeof command.name !== 'string' || answered.has(command.command_id)) return;
    answered.add(command.command_id);
    const status = KNOWN.has(command.name) ? 'SUCCEEDED' : 'FAILED';
    onCommand({
      gateway: gatewayName,
      command_id: command.command_id,
      name: command.name,
      ...(typeof command.device_id === 'string' ? { device_id: command.device_id } : {}),
      parameters: command.parameters,
      status,
    });
    const response = { command_id: command.command_id, status, ...(status === 'FAILED' ? { details: `the simulator does not know the command "${command.name}"` } : {}) };
    client.publish(`${topic}/command-responses`, JSON.stringify(response), { qos: 1 });
  });
  // mqtt.js subscribes again after each reconnect (resubscribe), so commands keep coming.
  await client.subscribeAsync(`${topic}/commands`, { qos: 1 });
}
