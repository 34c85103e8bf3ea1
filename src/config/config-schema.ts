// The shape of gateway.config.yaml: its zod schema, and the types the gateway reads (GatewayConfig and the
// kinds of server). Apart from the loader (config.ts), so that the checks across keys (checks.ts) can read the
// type the loader hands them without the two importing each other.
import type { SandboxPolicy } from '../../bridge/sandbox/index.js';
import { z } from 'zod';
import { redisCluster, redisSentinel } from './redis.js';
import { allowedHosts, peers } from './security.js';
import { auth } from './auth.js';
import { credentialStore, publicUrl } from './credentials.js';
import { SERVER_NAME, ownServerName, server, serverName } from './servers.js';
import { sandboxBlock } from './sandbox.js';
import { MiB, NAME_PART, bool, int, positiveMs } from './values.js';
import { telemetry } from '../telemetry/index.js';
import { GUARDRAIL_STAGES } from '../../policy/guardrails/index.js';
import { COMMAND_TIMEOUT_MS } from '../../infra/redis-fail-fast.js';
import { CALLER_LIMIT_DEFAULTS } from '../edge/index.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const globs = z.array(z.string().min(1));

/** A curated view over /mcp at /profiles/<name>/mcp (src/profiles/profile.ts; checked in profile-checks.ts). */
const profile = z.strictObject({
  /** Globs over /mcp tool names; left out, every tool. */
  tools: globs.optional(),
  prompts: globs.optional(),
  /** Globs over resource URIs and templates. */
  resources: globs.optional(),
  /** /mcp name → the name this profile shows (tools and prompts). */
  rename: z.record(z.string().min(1), z.string()).default({}),
  /** Public name → the description this profile shows. */
  describe: z.record(z.string().min(1), z.string().min(1)).default({}),
  /** tools/list shows search_tools and call_tool instead of the tools themselves. */
  search: bool().default(false),
});

const rateLimit = z
  .strictObject({
    requestsPerMinute: positiveMs,
    /** Requests allowed at once before the steady rate applies. */
    burst: positiveMs.optional(),
  })
  .transform((limit) => ({
    requestsPerMinute: limit.requestsPerMinute,
    burst: limit.burst ?? limit.requestsPerMinute,
  }));

const policy = z.strictObject({
  name: z.string().min(1),
  principals: z.strictObject({
    ids: z.array(z.string().min(1)).optional(),
    groups: z.array(z.string().min(1)).optional(),
  }),
  allow: z
    .strictObject({
      servers: z.array(serverName).optional(),
      tools: globs.optional(),
      prompts: globs.optional(),
      resources: globs.optional(),
    })
    .prefault({}),
  deny: z
    .strictObject({
      servers: z.array(serverName).min(1, 'an empty list denies nothing; remove it').optional(),
      tools: globs.min(1, 'an empty list denies nothing; remove it').optional(),
      prompts: globs.min(1, 'an empty list denies nothing; remove it').optional(),
      resources: globs.min(1, 'an empty list denies nothing; remove it').optional(),
    })
    .prefault({}),
  when: z.array(z.strictObject({ tool: z.string().min(1), expr: z.string().min(1) })).default([]),
  pin: bool().default(false),
  rateLimit: rateLimit.optional(),
});

const guardrailDetector = z.union([
  z.string().min(1),
  z.strictObject({
    /** Names the marker (`[redacted:<name>]`) and the audit record. */
    name: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'a detector name is a letter, then letters, digits, _ or -'),
    /** RE2 syntax (linear time; gitleaks' patterns work as written). */
    regex: z.string().min(1),
  }),
  /** A company's own DLP or classifier (docs/guardrails.md): https, or http to this machine only. */
  z.strictObject({
    webhook: z.string().min(1),
    name: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'a detector name is a letter, then letters, digits, _ or -')
      .optional(),
    /** The whole call's bound, in milliseconds (default 2000). */
    timeoutMs: int().pipe(z.number().min(1).max(60_000)).optional(),
    /** On an outage, a timeout or a malformed answer: false (default) refuses, true passes with an audit line. */
    failOpen: bool().optional(),
    /** Sent with each call (an Authorization header written with ${VAR}); nothing else of the gateway's is. */
    headers: z.record(z.string(), z.string()).optional(),
  }),
]);

/** A guardrail (docs/guardrails.md): what passes through, judged by detectors, chosen as policies choose. */
const guardrail = z.strictObject({
  name: z.string().min(1),
  on: z.array(z.enum(GUARDRAIL_STAGES)).min(1, 'name a stage: arguments, results, prompts or resources'),
  principals: z
    .strictObject({ ids: z.array(z.string().min(1)).optional(), groups: z.array(z.string().min(1)).optional() })
    .optional(),
  servers: z.array(serverName).optional(),
  tools: globs.optional(),
  prompts: globs.optional(),
  resources: globs.optional(),
  endpoints: z.array(z.string().min(1)).optional(),
  detect: z.array(guardrailDetector).min(1, 'name a detector, for example creditCard or secrets'),
  action: z.enum(['redact', 'block', 'log']),
});

export const configSchema = z.strictObject({
  listen: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: int().pipe(z.number().min(0).max(65535)).default(8080),
      allowedOrigins: z.array(z.string()).default([]),
      allowedHosts,
      maxBodyBytes: int()
        .pipe(z.number().min(1024))
        .default(4 * MiB),
      /**
       * Connections served at once; past it only /healthz and /readyz are answered. Default: below the open-file limit.
       */
      maxConnections: int().pipe(z.number().min(1)).optional(),
      /** Requests one principal may have in flight at once; beyond it 429 with Retry-After. */
      maxRequestsPerPrincipal: int().pipe(z.number().min(1)).default(CALLER_LIMIT_DEFAULTS.maxRequests),
      /** Streams (subscriptions/listen, a 2025 session's GET) one principal may hold open; beyond it 429. */
      maxStreamsPerPrincipal: int().pipe(z.number().min(1)).default(CALLER_LIMIT_DEFAULTS.maxStreams),
      /** On SIGTERM/SIGINT, how long requests in flight may take to finish before connections are cut. */
      drainMs: int().pipe(z.number().min(0)).default(10_000),
      /** On SIGTERM/SIGINT, how long /readyz says "draining" while everything is still served, before the drain. */
      drainDelayMs: int().pipe(z.number().min(0)).default(0),
      /** The gateway as a browser reaches it: connect links and OAuth callbacks are built on it. */
      publicUrl,
    })
    .prefault({}),
  log: z.strictObject({ level: z.enum(LOG_LEVELS).default('info') }).prefault({}),
  /** Traces to an OpenTelemetry collector; off unless configured here or by OTEL_* variables. */
  telemetry: telemetry.prefault({}),
  aggregate: z
    .strictObject({
      separator: z.string().regex(NAME_PART, 'the separator is made of A-Z a-z 0-9 _ -').max(8).default('__'),
      /** How long a list on /mcp waits for each upstream before answering without it. */
      listDeadlineMs: positiveMs.default(5_000),
      /** Signs /mcp cursors; set the same value on every replica. Random per start when absent. */
      cursorSecret: z.string().min(16, 'use at least 16 characters').optional(),
    })
    .prefault({}),
  cache: z
    .strictObject({
      /** memory: this process only (lru-cache); redis: shared by every replica pointing at the same Redis. */
      store: z.enum(['memory', 'redis']).default('memory'),
      url: z
        .string()
        .regex(/^rediss?:\/\//, 'give a redis:// or rediss:// URL')
        .default('redis://127.0.0.1:6379'),
      sentinel: redisSentinel.optional(),
      cluster: redisCluster.optional(),
      keyPrefix: z.string().default('mcp-gateway:'),
      /**
       * How long a Redis command may take before it counts as failed and Redis is skipped for a moment (the
       * cache, rate limits and 2025 sessions do without it). Raise it for a Redis far away.
       */
      commandTimeoutMs: int()
        .pipe(z.number().min(1, 'give at least 1 ms').max(60_000, 'give at most 60000 ms (one minute)'))
        .default(COMMAND_TIMEOUT_MS),
      /** Bounds on the ttlMs upstreams ask for; 0 (not cacheable) is never raised. */
      minTtlMs: int().pipe(z.number().min(0)).default(0),
      maxTtlMs: int().pipe(z.number().min(0)).default(3_600_000),
      maxEntries: int().pipe(z.number().min(1)).default(10_000),
      maxBytes: int()
        .pipe(z.number().min(1024))
        .default(64 * MiB),
      /**
       * Keys the hash that tells callers' private entries apart; the same on every replica. Random per start when
       * absent.
       */
      contextSecret: z.string().min(16, 'use at least 16 characters').optional(),
    })
    .prefault({}),
  servers: z.record(ownServerName, server),
  /** Curated views over /mcp, each at /profiles/<name>/mcp. */
  profiles: z
    .record(z.string().regex(SERVER_NAME, 'profile names are 1-32 characters of A-Z a-z 0-9 _ -'), profile)
    .default({}),
  /** Search mode over every /mcp tool at /search/mcp; profiles' own `search: true` is separate. */
  search: z
    .strictObject({
      /** false: /search/mcp answers 404 naming this setting. */
      enabled: bool().default(true),
    })
    .prefault({}),
  /** Who may call; left out, callers are anonymous (allowed only while listening on loopback). */
  auth: auth.optional(),
  /** Allow-lists; with any configured, whatever none allows is denied. */
  policies: z.array(policy).default([]),
  /** The rate every principal gets unless one of its policies sets its own. */
  rateLimit: rateLimit.optional(),
  /** Rules over what passes through (arguments, results, prompts, resources): redact, block or log. */
  guardrails: z.array(guardrail).default([]),
  audit: z
    .strictObject({
      destination: z.string().min(1).default('stderr'),
      arguments: bool().default(false),
    })
    .prefault({}),
  /** Calls the gateway holds open on 2025 servers while the client answers their questions (MRTR). */
  mrtr: z
    .strictObject({
      /** Signs the gateway's requestState; the same on every replica. Random per start when absent. */
      secret: z.string().min(16, 'use at least 16 characters').optional(),
      /** How long a held call waits for the client's retry before it is cancelled. */
      holdMs: positiveMs.default(300_000),
      /** Calls one caller may have held at once, on every server together; beyond it the call is refused. */
      maxHeldPerCaller: positiveMs.default(4),
      /** How long a call on a 2025 stdio server waits behind another's held call before that call is cancelled. */
      queueMs: positiveMs.default(15_000),
      /** Where other replicas reach this one to forward a retry (default: the listen address). */
      internalUrl: z.url({ protocol: /^https?$/ }).optional(),
      peers,
    })
    .prefault({}),
  /** 2025-era clients (initialize, Mcp-Session-Id) on the same endpoints. */
  legacyClients: z
    .strictObject({
      /**
       * Encrypts session ids; the same on every replica, so any of them serves a session. Random per start when absent.
       */
      sessionSecret: z.string().min(16, 'use at least 16 characters').optional(),
      sessionTtlMs: positiveMs.default(86_400_000),
    })
    .prefault({}),
  /** Per-user upstream credentials, encrypted at rest (src/credentials/). */
  credentials: credentialStore,
  /** The sandbox every stdio server runs in unless its own `sandbox:` says otherwise (docs/sandbox.md). */
  sandbox: sandboxBlock.optional(),
  /** Where pinned tools' digests are kept (a JSON file); in memory only when absent. */
  pinsFile: z.string().min(1).optional(),
  /**
   * The oldest a pinned tool's definition may be when a call is judged against it: older, it is read from the server
   * again.
   */
  pinsMaxAgeMs: int().pipe(z.number().min(0)).default(60_000),
});

export type ParsedConfig = z.infer<typeof configSchema>;
/** A server as validated, with a stdio server's sandbox resolved (effectiveSandbox) at load. */
export type ServerConfig = ParsedConfig['servers'][string] & { sandboxPolicy?: SandboxPolicy };
// `envReads`: the variables it reads with ${VAR}, kept from children
export type GatewayConfig = Omit<ParsedConfig, 'servers'> & {
  servers: Record<string, ServerConfig>;
  envReads: readonly string[];
};
export type StdioServerConfig = Extract<ServerConfig, { transport: 'stdio' }>;
export type HttpServerConfig = Extract<ServerConfig, { transport: 'http' }>;
export type SseServerConfig = Extract<ServerConfig, { transport: 'sse' }>;
export type OpenApiServerConfig = Extract<ServerConfig, { transport: 'openapi' }>;
