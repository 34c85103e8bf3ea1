// The stack every served server runs on, built in one place and in the order docs/design.md draws it, from
// the client's side down to the hop:
//
//   cache → [per-caller secrets] → MRTR bridge → [caller's credential] → limits → metering → trace propagation → transport (bridge/)
//
// Why this order: the cache answers lists before anything below spends a slot; the MRTR bridge holds a
// 2025 server's call above the limits, so a held question does not occupy a slot twice; limits queue
// before metering, so queue waits are never counted as the server's time; propagation sits right on the
// hop, so its span times only the call. A server reached as each caller (servers.<name>.credentials) gets
// the credentials layer above the limits: a token exchange or a refresh does not hold a slot, and an answer
// it gives itself (connect first) spends none. A perCaller server with secrets: gets its gate above the
// MRTR bridge: a caller without their values is sent to the paste page before anything below runs (the
// transport of a perCaller server is src/layers/per-caller/, a child per caller).
import type { Upstream } from '../../bridge/upstream.js';
import type { ListCache } from '../../cache/list-cache.js';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import type { Log } from '../../infra/log.js';
import type { HeldCalls } from '../mrtr/input-bridge.js';
import { InputBridge } from '../mrtr/input-bridge.js';
import type { ServerMeter } from '../ops/upstream-metrics.js';
import { CachedUpstream } from './cached-upstream.js';
import { LimitedUpstream, type Limits } from './limits/limited-upstream.js';
import { MeteredUpstream } from './metered-upstream.js';
import { PropagatingUpstream } from './propagating-upstream.js';
import { CredentialedUpstream, type CredentialSource } from '../credentials/credentialed-upstream.js';
import type { SecretEnv } from './per-caller/secret-env.js';
import { SecretGate } from './per-caller/secret-gate.js';

export interface StackSettings extends Limits {
  transport: 'stdio' | 'http';
  roots?: readonly JsonObject[] | undefined;
}

export interface StackParts {
  cache: ListCache;
  held: HeldCalls;
  meter: ServerMeter;
  /** Told how long each queued request waited for its slot, in seconds. */
  queueWaited(seconds: number): void;
  log: Log;
  /** Where each caller's own credential for this server comes from; absent: the server's static headers. */
  credentials?: CredentialSource | undefined;
  /** A perCaller server's secrets: a caller without theirs gets the paste link above the MRTR bridge. */
  secrets?: SecretEnv | undefined;
}

/** The served top of the stack, and the limits layer (its load is read for metrics and /readyz). */
export interface ServerStack {
  served: CachedUpstream;
  limits: LimitedUpstream;
}

/** Wraps one server's transport in its stack. Cold path: once per server start or replacement. */
export function buildServerStack(transport: Upstream, settings: StackSettings, parts: StackParts): ServerStack {
  const propagating = new PropagatingUpstream(transport, settings.transport);
  const metered = new MeteredUpstream(propagating, parts.meter);
  const limits = new LimitedUpstream(metered, settings, parts.queueWaited);
  const reached = parts.credentials ? new CredentialedUpstream(limits, parts.credentials) : limits;
  const bridged = new InputBridge(reached, { held: parts.held, roots: settings.roots, log: parts.log });
  const gated = parts.secrets ? new SecretGate(bridged, parts.secrets) : bridged;
  const served = new CachedUpstream(gated, parts.cache);
  return { served, limits };
}
