// servers.<name>: what an entry of each transport holds (stdio child, Streamable HTTP, HTTP+SSE), how a
// missing `transport` is read from `command`/`url`, and which names a server may not take.
import { z } from 'zod';
import { inheritEnv } from './security.js';
import { serverCredentials } from './credentials.js';
import { perCallerSecrets } from './per-caller-checks.js';
import { serverSandbox } from './sandbox.js';
import { unknownKeysMessage } from './unknown-keys.js';
import { MiB, bool, int, positiveMs } from './values.js';

export const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** Settings every upstream has, whatever carries its bytes. */
const upstreamCommon = {
  era: z.enum(['auto', 'modern', 'legacy']).default('auto'),
  /** What this server's names are prefixed with on /mcp (defaults to the server's name). */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'a prefix is 1-32 characters of A-Z a-z 0-9 _ -')
    .optional(),
  /** The name people see on the gateway's connect and paste pages (defaults to the server's key). */
  title: z.string().trim().min(1).max(80).optional(),
  timeoutMs: positiveMs.default(60_000),
  probeTimeoutMs: positiveMs.default(5_000),
  legacyTtlMs: int().pipe(z.number().min(0)).default(0),
  /** Requests handed to the server at once; more wait in its queue (docs/configuration.md: Overload). */
  maxInFlight: int().pipe(z.number().min(1, 'at least 1: a server that may take no request cannot serve')).default(16),
  /** Requests waiting for one of those slots; past it callers get 503 at once. 0: never wait. */
  maxQueued: int().pipe(z.number().min(0)).default(64),
  /** How long a request may wait for a slot before it is refused with 503. */
  queueTimeoutMs: positiveMs.default(10_000),
  /** Whether /readyz waits for this server. */
  required: bool().default(true),
  /** Answers a 2025 server's roots/list from here instead of asking the client. */
  roots: z
    .array(
      z.looseObject({ uri: z.string().regex(/^file:\/\//, 'a root is a file:// URI'), name: z.string().optional() }),
    )
    .optional(),
};

const stdioServer = z.strictObject({
  transport: z.literal('stdio'),
  command: z.string().min(1, 'give the program to run, for example "node"'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  inheritEnv,
  cwd: z.string().default('.'),
  startupTimeoutMs: positiveMs.default(30_000),
  shutdownGraceMs: positiveMs.default(2_000),
  maxLineBytes: int()
    .pipe(z.number().min(1024))
    .default(16 * MiB),
  /**
   * Children of this command, each request to the least busy one; `auto`: one per core (docs/configuration.md:
   * instances).
   */
  instances: z
    .union(
      [
        z.literal('auto'),
        int().pipe(z.number().min(1, 'at least 1 child; 1 runs the server alone, as without instances')),
      ],
      {
        error: 'give a whole number of children (1 or more) or "auto" (one per core)',
      },
    )
    .default(1),
  /**
   * A child (or `instances` pool) per principal, started on their first call (docs/configuration.md: Per-caller
   * servers).
   */
  perCaller: bool().default(false),
  /** With perCaller: a caller's child with no call for this long is stopped. */
  idleMs: positiveMs.default(600_000),
  /** With perCaller: children that may run at once; past it the least recently used idle one stops, or 503. */
  maxCallers: int().pipe(z.number().min(1, 'at least 1 caller, or the server serves nobody')).default(50),
  /** With perCaller: environment variables each caller pastes on the gateway's page, kept encrypted per caller. */
  secrets: perCallerSecrets,
  /** With perCaller: each caller's OAuth token in their child's environment (type oauth with env:, issuer:). */
  credentials: serverCredentials.optional(),
  /** Runs the child in a sandbox (docs/sandbox.md); false runs it bare even with a top-level sandbox:. */
  sandbox: serverSandbox,
  ...upstreamCommon,
});

const httpServer = z.strictObject({
  transport: z.literal('http'),
  url: z.url({ protocol: /^https?$/, error: "give the server's MCP endpoint as an http:// or https:// URL" }),
  /** Sent with every request, e.g. Authorization: "Bearer ${TOKEN}". */
  headers: z.record(z.string(), z.string()).default({}),
  /** Each caller reaches this server as themselves (docs/configuration.md: per-user credentials). */
  credentials: serverCredentials.optional(),
  ...upstreamCommon,
});

/**
 * A remote server of the 2024-11-05 HTTP+SSE transport: `url` is its event stream (GET), whose endpoint
 * event names where messages are POSTed. Always a 2025-era server.
 */
const sseServer = httpServer.extend({ transport: z.literal('sse') });
/** A REST API described by an OpenAPI document, served as tools (docs/openapi.md; bridge/openapi/). */
const openapiServer = z.strictObject({
  transport: z.literal('openapi'),
  /** A file (relative to the config's folder) or an https:// URL (http:// only to loopback). */
  openapi: z.string().min(1, 'give the OpenAPI document: a file path or an https:// URL'),
  /** Where the requests go; overrides the document's servers[] (required when it names none). */
  baseUrl: z
    .url({ protocol: /^https?$/, error: "give the REST API's base URL as an http:// or https:// URL" })
    .optional(),
  /** Operation globs (operationId, or the name made from method and path): deny wins over allow. */
  operations: z
    .strictObject({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
    .optional(),
  /** Sent with every request, e.g. X-Api-Key: "${KEY}". */
  headers: z
    .record(z.string(), z.string().regex(/^[^\r\n\0]*$/, 'a header value may not hold CR, LF or NUL characters'))
    .default({}),
  /** Each caller reaches the API as themselves: type oauth (issuer named) or tokenExchange (docs/openapi.md). */
  credentials: serverCredentials.optional(),
  /** How long clients and the gateway's cache may keep the tool list. */
  listTtlMs: int().pipe(z.number().min(0)).default(300_000),
  /** A REST answer larger than this is refused (the call is an error naming this key). */
  maxResponseBytes: int()
    .pipe(z.number().min(1024))
    .default(4 * MiB),
  ...upstreamCommon,
});

const SERVER_KEYS = new Set([
  ...Object.keys(stdioServer.shape),
  ...Object.keys(httpServer.shape),
  ...Object.keys(openapiServer.shape),
]);
/** The keys that each name a kind of server; an entry names exactly one. */
const KIND_KEYS = ['command', 'url', 'openapi'] as const;

// `transport` may be left out: a server with a `url` is remote, one with a `command` is a child process.
// With neither (`c: {}`, or `c:` alone), say that, rather than that `command` is missing.
export const server = z.preprocess(
  (value, ctx) => {
    const entry = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
    const kinds = KIND_KEYS.filter((key) => key in entry);
    if (kinds.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          `${kinds.join(' and ')} each name a kind of server; give one: command: (a program over stdio), ` +
          'url: (a remote MCP endpoint) or openapi: (a REST API from its OpenAPI document)',
      });
      return z.NEVER;
    }
    if ('transport' in entry) return value;
    if (kinds.length === 0) {
      // `comand:` or a host's `autoApprove:` beside nothing usable: name the key rather than the missing command.
      const unknown = Object.keys(entry).filter((key) => !SERVER_KEYS.has(key));
      if (unknown.length) {
        ctx.addIssue({ code: 'custom', message: unknownKeysMessage('', unknown, [...KIND_KEYS]).slice(2) });
        return z.NEVER;
      }
      ctx.addIssue({
        code: 'custom',
        message:
          'a server needs either command: (a program the gateway runs over stdio), url: (a remote MCP endpoint) ' +
          'or openapi: (a REST API from its OpenAPI document), for example { command: node, args: [server.js] } or ' +
          '{ url: "https://mcp.example.com/mcp" }',
      });
      return z.NEVER;
    }
    return { ...entry, transport: 'openapi' in entry ? 'openapi' : 'url' in entry ? 'http' : 'stdio' };
  },
  z.discriminatedUnion('transport', [stdioServer, httpServer, sseServer, openapiServer]),
);

export const serverName = z.string().regex(SERVER_NAME, 'server names are 1-32 characters of A-Z a-z 0-9 _ -');
/** Names the gateway's own endpoints go by in metrics, audit lines and 2025 sessions, where servers go by theirs. */
const RESERVED_SERVER_NAMES: Readonly<Record<string, string>> = { mcp: '/mcp', search: '/search/mcp' };
export const ownServerName = serverName.refine((name) => !Object.hasOwn(RESERVED_SERVER_NAMES, name), {
  error: (issue) =>
    `"${String(issue.input)}" is what the gateway's own ${RESERVED_SERVER_NAMES[String(issue.input)]} endpoint is ` +
    `called in metrics, audit lines and sessions; give this server another name`,
});
