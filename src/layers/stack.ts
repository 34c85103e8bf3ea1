// The stack every served server runs on, built in one place and in the order docs/design.md draws it, from
// the client's side down to the hop:
//
// header rules → cache → [per-caller secrets] → MRTR bridge → [caller's credential] → limits → metering → trace
// propagation → transport (bridge/)
//
// Why this order: header rules (tools whose x-mcp-header declarations are invalid left out of lists, and
// refused) sit on the cache, so that a list it holds teaches them without an upstream call; the cache
// answers lists before anything below spends a slot; the MRTR bridge holds a
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
import type { HeldCalls } from '../mrtr/index.js';
import { InputBridge } from './input-bridge.js';
import type { ServerMeter } from '../ops/index.js';
import { CachedUpstream } from './cached-upstream.js';
import { HeaderRulesUpstream } from './header-rules-upstream.js';
import { LimitedUpstream, type Limits } from './limits/limited-upstream.js';
import { MeteredUpstream } from './metered-upstream.js';
import { PropagatingUpstream } from './propagating-upstream.js';

export interface StackSettings extends Limits {
  transport: 'stdio' | 'http' | 'sse' | 'openapi';
  roots?: readonly JsonObject[] | undefined;
}

export interface StackParts {
  cache: ListCache;
  held: HeldCalls;
  meter: ServerMeter;
  /** Told how long each queued request waited for its slot, in seconds. */
  queueWaited(seconds: number): void;
  log: Log;
  /**
   * The layers of a server reached as each caller or with per-caller values, placed here but made by the
   * credentials' wiring (src/gateway/credentials.ts), so a gateway without them never loads their modules.
   */
  caller?: CallerLayers | undefined;
}

/** A layer this stack places but does not make: it wraps the stack below it. */
export type Layer = (below: Upstream) => Upstream;

export interface CallerLayers {
  /** Sends each caller as themselves (CredentialedUpstream, over the server's credential source). */
  credentials?: Layer | undefined;
  /**
   * A perCaller server's per-caller values (secrets, an OAuth token): a caller without theirs gets the connect
   * link above the MRTR bridge (SecretGate).
   */
  secrets?: Layer | undefined;
}

/** The top of a server's stack: an Upstream that can also say when its requests in flight are done. */
export interface ServedUpstream extends Upstream {
  drained(ms: number): Promise<boolean>;
  /** The stack below the cache: for what must be read as the server says it now (a pinned tool's definition). */
  readonly uncached: Upstream;
}

/** The served top of the stack, and the limits layer (its load is read for metrics and /readyz). */
export interface ServerStack {
  served: ServedUpstream;
  limits: LimitedUpstream;
}

/** Wraps one server's transport in its stack. Cold path: once per server start or replacement. */
export function buildServerStack(transport: Upstream, settings: StackSettings, parts: StackParts): ServerStack {
  // An HTTP+SSE server's requests carry the trace in _meta, which its upstream lends in as stdio's does.
  // A REST API (openapi) gets the context as the traceparent header of its HTTP request, as an HTTP server does.
  const propagating = new PropagatingUpstream(transport, settings.transport === 'stdio' ? 'stdio' : 'http');
  const metered = new MeteredUpstream(propagating, parts.meter);
  const limits = new LimitedUpstream(metered, settings, parts.queueWaited);
  const reached = parts.caller?.credentials?.(limits) ?? limits;
  const bridged = new InputBridge(reached, {
    held: parts.held,
    roots: settings.roots,
    placesQuestions: settings.transport === 'http',
    log: parts.log,
  });
  const gated = parts.caller?.secrets?.(bridged) ?? bridged;
  const cached = new CachedUpstream(gated, parts.cache);
  const served = new HeaderRulesUpstream(cached, parts.log);
  return { served, limits };
}

/** What lies below a server's cache, when `upstream` is the top of a stack built here (or its cache layer). */
export function uncachedOf(upstream: Upstream): Upstream {
  return upstream instanceof HeaderRulesUpstream || upstream instanceof CachedUpstream ? upstream.uncached : upstream;
}
