import { listWebhooks, type Webhook } from '../../client/webhooks.js';
import type { CustomerApi } from '../../client/api.js';
import { CliError } from '../io.js';

/** The webhook a command names, by id or by its exact URL (one of them). */
export async function findWebhook(api: CustomerApi, ref: string): Promise<Webhook> {
  const webhooks = await listWebhooks(api);
  const byId = webhooks.find((w) => w.webhook_id === ref);
  if (byId) return byId;
  const byUrl = webhooks.filter((w) => w.url === ref);
  if (byUrl.length === 1) return byUrl[0]!;
  if (byUrl.length > 1) throw new CliError(`${byUrl.length} webhooks send to ${ref}: name one by its id (\`scanhub webhooks list\` shows them)`);
  throw new CliError(`no webhook with the id or URL "${ref}": \`scanhub webhooks list\` shows them`);
}
