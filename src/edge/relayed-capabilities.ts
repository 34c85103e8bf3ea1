// A server/discover answer may only promise what reaches the client through the gateway: list changes are
// relayed (subscriptions/listen), resource subscriptions and log notifications are not yet, so `subscribe`
// and `logging` are dropped.

import { isObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';

const NOT_RELAYED_FLAGS = ['subscribe'];
const NOT_RELAYED_CAPABILITIES = ['logging'];

export function keepRelayedCapabilities(response: JsonRpcResponse): void {
  if (!('result' in response) || !isObject(response.result.capabilities)) return;
  const capabilities = response.result.capabilities;
  for (const key of NOT_RELAYED_CAPABILITIES) delete capabilities[key];
  for (const feature of Object.values(capabilities)) {
    if (isObject(feature)) for (const flag of NOT_RELAYED_FLAGS) delete feature[flag];
  }
}
