// What an operation is as an MCP tool: its definition (description, inputSchema, outputSchema, annotations)
// and the plan its calls follow — which argument goes to the path, the query, a header, a cookie or the
// body. Parameters and a JSON body's properties share one flat set of arguments where their names do not
// collide; where they do (or the body is not an object), the body is the one argument `body`.
import type { Operation, ParameterSpec } from './operations.js';
import type { JsonSchema } from './schema-convert.js';

export interface ArgumentPlace {
  readonly argument: string;
  readonly parameter: ParameterSpec;
}

export type BodyPlan =
  | { readonly shape: 'none' }
  | { readonly shape: 'nested'; readonly kind: 'json' | 'form'; readonly mediaType: string; readonly argument: string }
  | { readonly shape: 'flat'; readonly kind: 'json' | 'form'; readonly mediaType: string; readonly fields: string[] };

export interface ToolPlan {
  readonly name: string;
  readonly operation: Operation;
  readonly definition: Record<string, unknown>;
  readonly inputSchema: JsonSchema;
  readonly places: readonly ArgumentPlace[];
  readonly body: BodyPlan;
  /** The answer's JSON is wrapped as `{ result }`: the operation's answer is not an object. */
  readonly wrapsResult: boolean;
}

export function planTool(name: string, operation: Operation): ToolPlan {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const places: ArgumentPlace[] = [];
  for (const parameter of operation.parameters) {
    const argument = parameter.name in properties ? `${parameter.in}_${parameter.name}` : parameter.name;
    properties[argument] = withDescription(parameter.schema, parameter.description);
    if (parameter.required) required.push(argument);
    places.push({ argument, parameter });
  }
  const body = planBody(operation, properties, required);
  const inputSchema: JsonSchema = { type: 'object', properties, ...(required.length && { required }) };
  const output = operation.response;
  const wrapsResult = output !== undefined && !isObjectSchema(output);
  const outputSchema =
    output === undefined
      ? undefined
      : wrapsResult
        ? { type: 'object', properties: { result: output }, required: ['result'] }
        : output;
  const definition: Record<string, unknown> = {
    name,
    ...(operation.summary && { title: operation.summary }),
    description: descriptionOf(operation),
    inputSchema,
    ...(outputSchema && { outputSchema }),
    annotations: annotationsOf(operation.method),
  };
  return { name, operation, definition, inputSchema, places, body, wrapsResult };
}

function planBody(operation: Operation, properties: Record<string, JsonSchema>, required: string[]): BodyPlan {
  const body = operation.body;
  if (!body) return { shape: 'none' };
  const fields = body.schema.properties;
  const flat =
    isObjectSchema(body.schema) &&
    fields !== null &&
    typeof fields === 'object' &&
    Object.keys(fields).length > 0 &&
    Object.keys(fields).every((field) => !(field in properties));
  if (flat) {
    const names = Object.keys(fields);
    for (const field of names) properties[field] = (fields as Record<string, JsonSchema>)[field]!;
    const own = Array.isArray(body.schema.required) ? (body.schema.required as string[]) : [];
    if (body.required) required.push(...own.filter((field) => names.includes(field)));
    return { shape: 'flat', kind: body.kind, mediaType: body.mediaType, fields: names };
  }
  const argument = 'body' in properties ? '_body' : 'body';
  properties[argument] = body.schema;
  if (body.required) required.push(argument);
  return { shape: 'nested', kind: body.kind, mediaType: body.mediaType, argument };
}

function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === 'object' || (schema.type === undefined && typeof schema.properties === 'object');
}

function withDescription(schema: JsonSchema, description: string | undefined): JsonSchema {
  return description && schema.description === undefined ? { ...schema, description } : schema;
}

function descriptionOf(operation: Operation): string {
  const parts = [operation.summary, operation.description].filter((part): part is string => part !== undefined);
  return parts.length ? parts.join('\n\n') : `${operation.method} ${operation.path}`;
}

/** What the HTTP method promises (RFC 9110): GET and HEAD change nothing, PUT and DELETE may be repeated. */
function annotationsOf(method: string): Record<string, boolean> {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return { readOnlyHint: true, openWorldHint: true };
    case 'DELETE':
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true };
    case 'PUT':
      return { readOnlyHint: false, idempotentHint: true, openWorldHint: true };
    default:
      return { readOnlyHint: false, idempotentHint: false, openWorldHint: true };
  }
}
