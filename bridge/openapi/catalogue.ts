// The tools a loaded document offers, each with where its calls go. The base URL is the config's `baseUrl`,
// else the document's first server; every request goes to that one origin. An operation whose own
// `servers:` names another origin is left out (and said so in the log): a document cannot send the gateway's
// requests, and the headers configured for this API, anywhere else.
import type { LoadedDocument } from './document.js';
import { DocumentError } from './document-source.js';
import { type Operation, operationsOf } from './operations.js';
import { describeOperation, nameOperations, toolNameOf } from './tool-names.js';
import { planTool, type ToolPlan } from './tools.js';

export interface CatalogueSettings {
  /** `servers.<name>`, for messages. */
  readonly where: string;
  readonly baseUrl?: string;
  /** Characters a tool name may have before the server's prefix makes it too long. */
  readonly nameBudget: number;
  /** Whether `operations:` lets an operation through (given its tool name and operationId). */
  readonly include: (names: readonly string[]) => boolean;
}

export interface CatalogueEntry {
  readonly plan: ToolPlan;
  /** The path the operation's paths are below (the base URL's, or its own server's on the same origin). */
  readonly basePath: string;
}

export interface Catalogue {
  readonly origin: string;
  readonly entries: ReadonlyMap<string, CatalogueEntry>;
  /** The tools/list items, in the document's order. */
  readonly tools: readonly Record<string, unknown>[];
}

export function buildCatalogue(
  document: LoadedDocument,
  settings: CatalogueSettings,
  warn: (message: string) => void,
): Catalogue {
  const base = baseUrlOf(document, settings);
  const kept: Operation[] = [];
  const allowed = operationsOf(document.api, document.dialect).filter((operation) =>
    settings.include([
      toolNameOf(operation, settings.nameBudget),
      ...(operation.operationId ? [operation.operationId] : []),
    ]),
  );
  const basePaths = new Map<Operation, string>();
  for (const operation of allowed) {
    const own = operation.serverUrl === undefined ? undefined : safeUrl(operation.serverUrl, base);
    if (own && own.origin !== base.origin) {
      warn(
        `${settings.where}: ${describeOperation(operation)} names its own server ${own.origin}, not ${base.origin}; ` +
          "the operation is left out (requests go only to baseUrl's origin)",
      );
      continue;
    }
    basePaths.set(operation, (own ?? base).pathname);
    kept.push(operation);
  }
  const named = nameOperations(kept, settings.nameBudget, settings.where);
  const entries = new Map<string, CatalogueEntry>();
  for (const [name, operation] of named)
    entries.set(name, { plan: planTool(name, operation), basePath: basePaths.get(operation)! });
  const order = new Map(kept.map((operation, index) => [operation, index]));
  const tools = [...entries.values()]
    .sort((a, b) => order.get(a.plan.operation)! - order.get(b.plan.operation)!)
    .map((entry) => entry.plan.definition);
  return { origin: base.origin, entries, tools };
}

function safeUrl(text: string, base: URL | string | undefined): URL | undefined {
  try {
    return new URL(text, base);
  } catch {
    return undefined;
  }
}

/** The config's baseUrl, else the document's first server (its variables at their defaults). */
function baseUrlOf(document: LoadedDocument, settings: CatalogueSettings): URL {
  const fromDocument = documentServer(document);
  const chosen = settings.baseUrl ?? fromDocument;
  const url = chosen === undefined ? undefined : safeUrl(chosen, document.url);
  if (!url)
    throw new DocumentError(
      `${settings.where}: the document names no server ${chosen ? `usable as a URL (${chosen}) ` : ''}to send ` +
        `requests to; set ${settings.where}.baseUrl, for example baseUrl: https://api.example.com/v1`,
    );
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new DocumentError(`${settings.where}: ${url.href} is not http(s); set ${settings.where}.baseUrl`);
  return url;
}

function documentServer(document: LoadedDocument): string | undefined {
  const api = document.api;
  if (document.dialect === 'swagger2') {
    if (typeof api.host !== 'string') return undefined;
    const schemes = Array.isArray(api.schemes) ? api.schemes : [];
    const scheme = schemes.includes('https') ? 'https' : (schemes[0] ?? 'https');
    return `${scheme}://${api.host}${typeof api.basePath === 'string' ? api.basePath : ''}`;
  }
  const first = Array.isArray(api.servers) ? (api.servers[0] as Record<string, unknown> | undefined) : undefined;
  if (!first || typeof first.url !== 'string') return undefined;
  const variables = (first.variables ?? {}) as Record<string, { default?: unknown }>;
  return first.url.replace(/\{([^}]+)\}/g, (whole, name: string) =>
    variables[name]?.default === undefined ? whole : String(variables[name].default),
  );
}
