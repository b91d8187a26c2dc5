/**
 * The MQTT topics of a deployment: a gateway publishes to `scanhub/{customer_id}/gateway/{its id}`
 * and nowhere else (docs/gateways-mqtt.md "What a gateway may do"). Provisioning hands the device
 * the prefix; the broker accepts only the full topic.
 */

/** `mqtt_topic_prefix` of a customer's gateways. */
export function topicPrefix(customerId: string): string {
  return `scanhub/${customerId}`;
}

/** The one topic a gateway may publish to, under its customer's prefix. */
export function gatewayTopic(prefix: string, gatewayId: string): string {
  return `${prefix}/gateway/${gatewayId}`;
}

/** The one topic filter a gateway may subscribe to: its commands arrive there (docs/commands.md). */
export function commandsTopic(gatewayTopicName: string): string {
  return `${gatewayTopicName}/commands`;
}

/** Where a gateway reports the outcome of its commands; besides its own topic, the only one it may publish to. */
export function commandResponsesTopic(gatewayTopicName: string): string {
  return `${gatewayTopicName}/command-responses`;
}
