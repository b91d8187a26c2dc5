/** The webhook message type of a command's change of status (docs/commands.md "Webhooks"). */
export const COMMAND_STATUS_TYPE = 'command.status';
