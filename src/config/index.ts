// src/config/: the gateway's config: read from its file (${VAR} and ${file:…} filled in), checked against its
// schema and across keys, each problem worded with its fix; and the types of what it holds.
export {
  ConfigError,
  ConfigFileMissing,
  exposureProblem,
  guardrailNames,
  LOG_LEVELS,
  loadConfigFile,
  parseConfig,
  SERVER_NAME,
  serverHeads,
} from './config.js';
export type {
  GatewayConfig,
  HttpServerConfig,
  OpenApiServerConfig,
  ServerConfig,
  SseServerConfig,
  StdioServerConfig,
} from './config.js';
export type { OAuthCredentials } from './credentials.js';
