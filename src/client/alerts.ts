import { seg, type CustomerApi } from './api.js';

/** An alert rule as the API shows it (docs/alerts.md): its kind's parameters beside its id. */
export interface AlertRule {
  rule_id: string;
  kind: string;
  gateway_ids?: string[];
  after_seconds?: number;
  below_percent?: number;
  job_config_id?: string;
  created: number;
}

export type NewAlertRule = Omit<AlertRule, 'rule_id' | 'created'>;

export interface Alert {
  alert_id: string;
  rule_id: string;
  kind: string;
  subject: { type: string; id: string };
  state: 'OPEN' | 'RESOLVED';
  opened: number;
  resolved?: number;
  details: Record<string, unknown>;
}

export function createAlertRule(api: CustomerApi, rule: NewAlertRule): Promise<AlertRule> {
  return api.client.post<AlertRule>(`${api.base}/alert-rules`, rule);
}

export async function listAlertRules(api: CustomerApi): Promise<AlertRule[]> {
  return (await api.client.get<{ items: AlertRule[] }>(`${api.base}/alert-rules`)).items;
}

export function deleteAlertRule(api: CustomerApi, id: string): Promise<void> {
  return api.client.delete(`${api.base}/alert-rules/${seg(id)}`);
}

/** The customer's alerts, newest first (the newest 500), of one state when given. */
export async function listAlerts(api: CustomerApi, state?: 'OPEN' | 'RESOLVED'): Promise<Alert[]> {
  return (await api.client.get<{ items: Alert[] }>(`${api.base}/alerts${state ? `?state=${state}` : ''}`)).items;
}
