// The running gateway: what startGateway hands its caller, and the parts reload and close work on.
import type { Upstream } from '../../bridge/upstream.js';
import type { ListCache } from '../../cache/list-cache.js';
import type { Aggregator } from '../aggregate/index.js';
import type { GatewayConfig } from '../config/index.js';
import type { HttpDrain, RequestTracker } from '../edge/index.js';
import type { Log } from '../../infra/log.js';
import type { SessionRelay } from '../legacy-client/index.js';
import type { ListenHub } from '../notify/index.js';
import type { HeldCallRetries } from '../mrtr/index.js';
import type { ProfileSet } from '../profiles/index.js';
import type { ToolSearch } from '../search/index.js';
import type { SecurityHolder } from './build-security.js';
import type { ServerSet } from './servers.js';
import type { GatewayTracer } from '../telemetry/index.js';

export interface RunningGateway {
  /** Base URL, for example http://127.0.0.1:8080 */
  url: string;
  upstreams: ReadonlyMap<string, Upstream>;
  aggregate: Aggregator;
  cache: ListCache;
  listen: ListenHub;
  security: SecurityHolder;
  /**
   * Applies a new config's authentication, policies, rate limits and audit settings. Throws, keeping the
   * old ones, when they cannot be built. Returns the sections that changed but need a restart.
   */
  reload(next: GatewayConfig): Promise<string[]>;
  close(): Promise<void>;
}

/** The config in force: a reload replaces it, so whoever needs it per request reads `current` then. */
export interface LiveConfig {
  current: GatewayConfig;
  /** 0 for the config the gateway started with, then one more per reload applied; and when (epoch ms). */
  reloads: number;
  appliedAt: number;
}

/** Everything reload and close act on. */
export interface GatewayParts {
  config: LiveConfig;
  servers: ServerSet;
  aggregate: Aggregator;
  /** The profiles (and /search/mcp's switch) of the config in force. */
  profiles: ProfileSet;
  /** The tool index search mode reads. */
  search: ToolSearch;
  cache: ListCache;
  listenHub: ListenHub;
  security: SecurityHolder;
  tracker: RequestTracker;
  drain: HttpDrain;
  retries: HeldCallRetries;
  sessionRelay: SessionRelay | undefined;
  /** Present while tracing: closed last, so the spans of the last requests are sent. */
  tracer: GatewayTracer | undefined;
  log: Log;
}
