// MCP 2026-07-28 constants: versions, _meta keys and the method sets each era knows.
import { isObject, type JsonObject, type JsonRpcRequest } from './jsonrpc.js';

export const MODERN_VERSION = '2026-07-28';
/** Versions the gateway serves downstream, newest first. */
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION];
/** Newest first; the gateway offers the first in `initialize` and accepts any of them back. */
export const LEGACY_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/**
 * The client capabilities a request declared in its own `_meta` (2026-07-28 remembers none between requests), or
 * undefined when it declared none or not as an object. The one place a layer reads them.
 */
export function declaredCapabilities(message: JsonRpcRequest): JsonObject | undefined {
  const meta = message.params?._meta;
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  return isObject(capabilities) ? capabilities : undefined;
}

/** RFC 5424 severities, least severe first: a request's logLevel lets through its own and those after it. */
export const LOG_LEVELS: readonly string[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** The severity of a log level (its index in LOG_LEVELS), or -1 for a value that is not a level. */
export function logSeverity(level: unknown): number {
  return typeof level === 'string' ? LOG_LEVELS.indexOf(level) : -1;
}

/** Client-to-server requests of the modern revision. */
export const MODERN_REQUEST_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
]);

/**
 * Methods the core had before 2026-07-28 and dropped. A request for one is refused as removed, unless an
 * extension the server advertises took its name up again (EXTENSION_METHODS).
 */
export const CORE_REMOVED_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/get',
  'tasks/result',
  'tasks/cancel',
  'tasks/list',
]);

/** The Tasks extension (SEP-2663): tools/call may answer resultType "task", polled with its three methods. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Client-to-server methods an extension defines, by the extension's identifier (capabilities.extensions). */
export const EXTENSION_METHODS: Readonly<Record<string, readonly string[]>> = {
  [TASKS_EXTENSION]: ['tasks/get', 'tasks/update', 'tasks/cancel'],
};

/** The Tasks extension's methods: each names a task by its id (the gateway's own on the way in, src/tasks/). */
export const TASK_METHODS: ReadonlySet<string> = new Set(EXTENSION_METHODS[TASKS_EXTENSION]);

/** The extension that defines a method, or undefined when none the gateway knows does. */
export function extensionOf(method: string): string | undefined {
  for (const [extension, methods] of Object.entries(EXTENSION_METHODS)) if (methods.includes(method)) return extension;
  return undefined;
}

/** Results that carry ttlMs/cacheScope (SEP-2549). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** Requests whose answer may be `input_required` (a modern server asking the client mid-call). */
export const MAY_ASK: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** The paged list methods, and the result field each one's items travel in. */
export const LIST_ITEMS = {
  'tools/list': 'tools',
  'prompts/list': 'prompts',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
} as const;
export type ListMethod = keyof typeof LIST_ITEMS;

/** Which cached answers an upstream's change notification makes stale (resources/updated: one resource's read). */
const STALE_AFTER: Readonly<Record<string, readonly (ListMethod | 'resources/read')[]>> = {
  'notifications/tools/list_changed': ['tools/list'],
  'notifications/prompts/list_changed': ['prompts/list'],
  'notifications/resources/list_changed': ['resources/list', 'resources/templates/list'],
  'notifications/resources/updated': ['resources/read'],
};

export function madeStaleBy(notificationMethod: string): readonly (ListMethod | 'resources/read')[] {
  return STALE_AFTER[notificationMethod] ?? [];
}

/** Server-to-client requests a legacy server may send in the middle of a call. */
export const LEGACY_CLIENT_REQUESTS: ReadonlySet<string> = new Set([
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
]);

/** Which request parameter the `Mcp-Name` header mirrors, by method (the Tasks extension's: its taskId). */
export const NAME_PARAM: Readonly<Record<string, 'name' | 'uri' | 'taskId'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export interface ServerInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}
