// MCP 2026-07-28 constants: versions, _meta keys and the method sets each era knows.

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
 * The _meta of a request the gateway makes on its own (re-reading lists, feeding the search index, its
 * listen streams): the version it speaks, no capabilities. A fresh object each time, as callers may add to it.
 */
export function ownRequestMeta(): Record<string, unknown> {
  return { [META.protocolVersion]: SUPPORTED_VERSIONS[0], [META.clientCapabilities]: {} };
}

/** RFC 5424 severities, least severe first: a request's logLevel lets through its own and those after it. */
export const LOG_LEVELS: readonly string[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

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

/** Results that carry ttlMs/cacheScope (SEP-2549). */
export const CACHEABLE_METHODS: ReadonlySet<string> = new Set(['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read']);

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
export const LEGACY_CLIENT_REQUESTS: ReadonlySet<string> = new Set(['sampling/createMessage', 'elicitation/create', 'roots/list']);

/** Which request parameter the `Mcp-Name` header mirrors, by method. */
export const NAME_PARAM: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

export interface ServerInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}
