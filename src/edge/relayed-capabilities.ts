// A server/discover answer may only promise what reaches the client through the gateway: list changes and
// resource updates are relayed (subscriptions/listen), log notifications are not yet, so `logging` is dropped.

import { isObject, type JsonObject, type JsonRpcResponse } from '../protocol/jsonrpc.js';

const NOT_RELAYED_FLAGS: string[] = [];
const NOT_RELAYED_CAPABILITIES = ['logging'];

/** Replaces the result's capabilities with a filtered copy: the answer may be a shared, frozen cache entry. */
export function keepRelayedCapabilities(response: JsonRpcResponse): void {
  if (!('result' in response) || !isObject(response.result.capabilities)) return;
  const capabilities: JsonObject = {};
  for (const [key, feature] of Object.entries(response.result.capabilities)) {
    if (NOT_RELAYED_CAPABILITIES.includes(key)) continue;
    if (!isObject(feature)) {
      capabilities[key] = feature;
      continue;
    }
    const kept: JsonObject = {};
    for (const [flag, value] of Object.entries(feature)) if (!NOT_RELAYED_FLAGS.includes(flag)) kept[flag] = value;
    capabilities[key] = kept;
  }
  response.result = { ...response.result, capabilities };
}
