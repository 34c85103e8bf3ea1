// The operations of a dereferenced document, in one shape whatever its version: Swagger 2.0 keeps its
// parameters' schemas inline and its body among its parameters (`in: body`, `in: formData`); OpenAPI 3 has
// `requestBody` and `content` maps. Everything downstream (tools.ts, request.ts) reads only this shape.
import { type Dialect, type JsonSchema, toJsonSchema } from './schema-convert.js';

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface ParameterSpec {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly required: boolean;
  readonly schema: JsonSchema;
  /** OpenAPI 3 serialisation style (`form`, `simple`, `deepObject`, ...); Swagger's collectionFormat mapped to it. */
  readonly style: string;
  readonly explode: boolean;
  readonly description?: string;
}

export interface BodySpec {
  readonly kind: 'json' | 'form';
  readonly mediaType: string;
  readonly schema: JsonSchema;
  readonly required: boolean;
}

export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId?: string;
  readonly summary?: string;
  readonly description?: string;
  readonly parameters: readonly ParameterSpec[];
  readonly body?: BodySpec;
  /** The schema of the first 2xx JSON answer, when the operation has one. */
  readonly response?: JsonSchema;
  /** What the request's Accept says: the operation's answer types, JSON first. */
  readonly accept: string;
  /** The operation's (or its path's) own `servers[0].url`, variables at their defaults (origin-rule.ts judges it). */
  readonly serverUrl?: string;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const LOCATIONS = new Set<string>(['path', 'query', 'header', 'cookie']);
/** Headers a document may not set: the connection's own, which undici and the gateway manage. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'content-type']);

type Node = Record<string, unknown>;
const asNode = (value: unknown): Node => (value && typeof value === 'object' ? (value as Node) : {});
const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

export function operationsOf(api: Node, dialect: Dialect): Operation[] {
  const operations: Operation[] = [];
  for (const [route, item] of Object.entries(asNode(api.paths))) {
    const pathItem = asNode(item);
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (operation && typeof operation === 'object')
        operations.push(operationOf(api, dialect, route, method, pathItem, asNode(operation)));
    }
  }
  return operations;
}

function operationOf(api: Node, dialect: Dialect, route: string, method: string, item: Node, op: Node): Operation {
  const raw = mergedParameters(item.parameters, op.parameters);
  const parameters = raw
    .filter(
      (p) => LOCATIONS.has(String(p.in)) && !(p.in === 'header' && RESERVED_HEADERS.has(String(p.name).toLowerCase())),
    )
    .map((p) => parameterOf(p, dialect));
  const body = dialect === 'swagger2' ? swaggerBody(api, op, raw) : openapiBody(op, dialect);
  const { response, types } = dialect === 'swagger2' ? swaggerResponse(api, op) : openapiResponse(op, dialect);
  const serverUrl = serverUrlOf(asArray(op.servers)[0]) ?? serverUrlOf(asArray(item.servers)[0]);
  return {
    method: method.toUpperCase(),
    path: route,
    ...(text(op.operationId) && { operationId: text(op.operationId) }),
    ...(text(op.summary) && { summary: text(op.summary) }),
    ...(text(op.description) && { description: text(op.description) }),
    parameters,
    ...(body && { body }),
    ...(response && { response }),
    accept: types.length ? types.join(', ') : 'application/json',
    ...(serverUrl && { serverUrl }),
  };
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A Server Object's url with each `{variable}` at its default (one without a default stays as written). */
export function serverUrlOf(server: unknown): string | undefined {
  const url = text(asNode(server).url);
  const variables = asNode(asNode(server).variables);
  return url?.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const fallback = asNode(variables[name]).default;
    return fallback === undefined ? whole : String(fallback);
  });
}

/** The path's parameters, overridden by the operation's of the same name and place. */
function mergedParameters(shared: unknown, own: unknown): Node[] {
  const byKey = new Map<string, Node>();
  for (const p of [...asArray(shared), ...asArray(own)].map(asNode)) byKey.set(`${p.in}:${p.name}`, p);
  return [...byKey.values()];
}

function parameterOf(p: Node, dialect: Dialect): ParameterSpec {
  const location = p.in as ParameterLocation;
  const description = text(p.description);
  const common = { name: String(p.name), in: location, required: p.required === true || location === 'path' };
  if (dialect === 'swagger2') {
    const { name: _n, in: _i, required: _r, description: _d, collectionFormat, allowEmptyValue: _a, ...schema } = p;
    const [style, explode] = collectionStyle(String(collectionFormat ?? 'csv'), location);
    return { ...common, schema: toJsonSchema(schema, dialect), style, explode, ...(description && { description }) };
  }
  const contentSchema = asNode(Object.values(asNode(p.content))[0]).schema;
  const style = text(p.style) ?? (location === 'query' || location === 'cookie' ? 'form' : 'simple');
  const explode = typeof p.explode === 'boolean' ? p.explode : style === 'form';
  const schema = toJsonSchema(p.schema ?? contentSchema ?? {}, dialect);
  return { ...common, schema, style, explode, ...(description && { description }) };
}

/** Swagger 2.0's collectionFormat as the OpenAPI 3 style and explode that send the same bytes. */
function collectionStyle(format: string, location: ParameterLocation): [string, boolean] {
  const plain = location === 'query' || location === 'cookie' ? 'form' : 'simple';
  if (format === 'multi') return ['form', true];
  if (format === 'ssv') return ['spaceDelimited', false];
  if (format === 'pipes') return ['pipeDelimited', false];
  if (format === 'tsv') return ['tabDelimited', false];
  return [plain, false];
}

const isJson = (type: string): boolean => /^application\/(.+\+)?json\b/i.test(type) || type === '*/*';
const FORM = 'application/x-www-form-urlencoded';

function openapiBody(op: Node, dialect: Dialect): BodySpec | undefined {
  const requestBody = asNode(op.requestBody);
  const content = asNode(requestBody.content);
  const required = requestBody.required === true;
  const json = Object.keys(content).find(isJson);
  if (json)
    return {
      kind: 'json',
      mediaType: json === '*/*' ? 'application/json' : json,
      schema: toJsonSchema(asNode(content[json]).schema ?? {}, dialect),
      required,
    };
  if (content[FORM])
    return {
      kind: 'form',
      mediaType: FORM,
      schema: toJsonSchema(asNode(content[FORM]).schema ?? {}, dialect),
      required,
    };
  return undefined;
}

function swaggerBody(api: Node, op: Node, raw: Node[]): BodySpec | undefined {
  const consumes = asArray(op.consumes ?? api.consumes).map(String);
  const body = raw.find((p) => p.in === 'body');
  if (body) {
    const mediaType = consumes.find(isJson) ?? 'application/json';
    return {
      kind: 'json',
      mediaType,
      schema: toJsonSchema(body.schema ?? {}, 'swagger2'),
      required: body.required === true,
    };
  }
  const fields = raw.filter((p) => p.in === 'formData');
  // Fields the operation only takes as multipart/form-data (a file upload) would be misread as a urlencoded
  // form: like an OpenAPI 3 multipart body, the operation gets no body argument (docs/openapi.md, Not yet).
  const takes = (type: string) => consumes.some((media) => media.toLowerCase().startsWith(type));
  const multipartOnly = takes('multipart/form-data') && !takes(FORM);
  if (!fields.length || multipartOnly) return undefined;
  const properties: Record<string, JsonSchema> = {};
  for (const field of fields)
    properties[String(field.name)] = parameterOf({ ...field, in: 'query' }, 'swagger2').schema;
  const required = fields.filter((field) => field.required === true).map((field) => String(field.name));
  const schema: JsonSchema = { type: 'object', properties, ...(required.length && { required }) };
  return { kind: 'form', mediaType: FORM, schema, required: required.length > 0 };
}

function firstSuccess(responses: unknown): Node | undefined {
  const entries = Object.entries(asNode(responses)).filter(([status]) => /^2(\d\d|XX)$/i.test(status));
  entries.sort(([a], [b]) => a.localeCompare(b));
  return entries.length ? asNode(entries[0]![1]) : undefined;
}

function openapiResponse(op: Node, dialect: Dialect): { response?: JsonSchema; types: string[] } {
  const success = firstSuccess(op.responses);
  const content = asNode(success?.content);
  const types = Object.keys(content).sort((a, b) => Number(isJson(b)) - Number(isJson(a)));
  const json = types.find(isJson);
  const schema = json ? asNode(content[json]).schema : undefined;
  return { ...(schema !== undefined && { response: toJsonSchema(schema, dialect) }), types };
}

function swaggerResponse(api: Node, op: Node): { response?: JsonSchema; types: string[] } {
  const types = asArray(op.produces ?? api.produces).map(String);
  const schema = firstSuccess(op.responses)?.schema;
  const json = types.length === 0 || types.some(isJson);
  return { ...(schema !== undefined && json && { response: toJsonSchema(schema, 'swagger2') }), types };
}
