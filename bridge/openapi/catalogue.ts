// The tools a loaded document offers, each with where its calls go. The base URL is the config's `baseUrl`,
// else the document's first server; every request goes to that one origin. An operation whose own
// `servers:` names another origin is left out (origin-rule.ts), its reason logged and kept for a call of it:
// a document cannot send the gateway's requests, and the headers configured for this API, anywhere else.
import type { LoadedDocument } from './document.js';
import { DocumentError } from './document-source.js';
import { type Operation, operationsOf, serverUrlOf } from './operations.js';
import { placeOperation } from './origin-rule.js';
import { nameOperations, toolNameOf } from './tool-names.js';
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
  /** The tools left out because their operation names another origin, each with the reason (and the fix). */
  readonly refused: ReadonlyMap<string, string>;
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
  const refused = new Map<string, string>();
  for (const operation of allowed) {
    const name = toolNameOf(operation, settings.nameBudget);
    const placed = placeOperation(operation, base, settings.where, name);
    if ('refusal' in placed) {
      warn(placed.refusal);
      refused.set(name, placed.refusal);
      continue;
    }
    basePaths.set(operation, placed.basePath);
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
  return { origin: base.origin, entries, refused, tools };
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
  return Array.isArray(api.servers) ? serverUrlOf(api.servers[0]) : undefined;
}
