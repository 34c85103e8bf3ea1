// OpenAPI 3.0 and Swagger 2.0 schemas are a dialect of JSON Schema draft 4 with keywords of their own
// (`nullable`, boolean `exclusiveMinimum`, `example`, `x-…`); MCP tool schemas are JSON Schema 2020-12. This
// converts one to the other, once per operation at load. An OpenAPI 3.1 schema already is 2020-12: it is only
// copied (without the OpenAPI-only keywords). A schema that refers to itself (a tree, after $ref resolution a
// cycle of objects) becomes `{}` where it recurs: a tool schema is a tree, and "anything" is the honest bound.
export type JsonSchema = Record<string, unknown>;
export type Dialect = 'swagger2' | 'openapi30' | 'openapi31';

/** Keywords only OpenAPI knows: meaningless to a JSON Schema validator or a host. */
const OPENAPI_ONLY = new Set(['discriminator', 'xml', 'externalDocs', 'example', 'nullable', 'x-nullable']);
/** Keywords whose value is a schema. */
const ONE_SCHEMA = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'];
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];

export function toJsonSchema(schema: unknown, dialect: Dialect): JsonSchema {
  return convert(schema, dialect, new Set()) as JsonSchema;
}

function convert(schema: unknown, dialect: Dialect, path: Set<object>): unknown {
  if (typeof schema === 'boolean') return schema;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return {};
  if (path.has(schema)) return {};
  path.add(schema);
  const source = schema as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (OPENAPI_ONLY.has(key) || key.startsWith('x-')) continue;
    if (ONE_SCHEMA.includes(key) && typeof value === 'object' && value !== null && !Array.isArray(value))
      out[key] = convert(value, dialect, path);
    else if (key === 'items' && Array.isArray(value))
      out.prefixItems = value.map((item) => convert(item, dialect, path));
    else if (SCHEMA_LISTS.includes(key) && Array.isArray(value))
      out[key] = value.map((item) => convert(item, dialect, path));
    else if (SCHEMA_MAPS.includes(key) && typeof value === 'object' && value !== null)
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, convert(sub, dialect, path)]));
    else out[key] = value;
  }
  path.delete(schema);
  if (dialect !== 'openapi31') draft4Bounds(source, out);
  if ('example' in source && !('examples' in out)) out.examples = [source.example];
  if (dialect === 'swagger2' && out.type === 'file') {
    out.type = 'string';
    out.contentEncoding = 'base64';
  }
  if (source.nullable === true || source['x-nullable'] === true) return nullable(out);
  return out;
}

/** Draft 4's boolean exclusiveMinimum/Maximum qualify minimum/maximum; 2020-12's are the bound itself. */
function draft4Bounds(source: JsonSchema, out: JsonSchema): void {
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof source[exclusive] !== 'boolean') continue;
    delete out[exclusive];
    if (source[exclusive] === true && typeof source[bound] === 'number') {
      out[exclusive] = source[bound];
      delete out[bound];
    }
  }
}

/** `nullable: true`: null is allowed besides what the schema says. */
function nullable(out: JsonSchema): JsonSchema {
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
  else if (out.type === undefined) return { anyOf: [out, { type: 'null' }] };
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}
