import type { CustomerApi } from './api.js';

/** A feature flag as the API returns it. */
export interface Feature {
  feature: string;
  enabled: boolean;
  additional_properties?: Record<string, unknown>;
}

/** The customer's feature flags. */
export async function listFeatures(api: CustomerApi): Promise<Feature[]> {
  return (await api.client.get<{ features: Feature[] }>(`${api.base}/features`)).features;
}
