// The JSON Schema of gateway.config.yaml, generated from the zod schema that validates it (so editors
// complete and check the same keys the gateway accepts). `npm run config-schema` writes it to
// gateway.config.schema.json; a test fails when the committed file and this generator disagree.
import { z } from 'zod';
import { mcpServerEntry } from './mcp-servers.js';
import { configSchema } from './config.js';

type Json = Record<string, unknown>;

export const CONFIG_SCHEMA_FILE = 'gateway.config.schema.json';

export function configJsonSchema(): Json {
  const schema = z.toJSONSchema(configSchema, {
    io: 'input',
    target: 'draft-7',
    unrepresentable: 'any',
    // `int().pipe(z.number().min(0))`: the input side is the whole number; its bounds are on the output side.
    override: ({ zodSchema, jsonSchema }) => {
      const def = zodSchema._zod.def;
      if (def.type !== 'pipe') return;
      const pipe = def as z.core.$ZodPipeDef;
      if (pipe.in._zod.traits.has('$ZodTransform')) return;
      const bounds = z.toJSONSchema(pipe.out, { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as Json;
      for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
        if (bounds[key] !== undefined) (jsonSchema as Json)[key] = bounds[key];
      }
    },
  }) as Json;
  const properties = schema.properties as Json;
  const servers = properties.servers as Json;
  // `transport` is inferred from `command` or `url`, so no one writes it; hosts' maps go in `mcpServers`.
  for (const branch of (servers.additionalProperties as Json).oneOf as Json[]) {
    branch.required = (branch.required as string[]).filter((key) => key !== 'transport');
  }
  properties.mcpServers = {
    description: 'Servers as Claude Desktop, Claude Code and Cursor list them; merged into servers',
    type: 'object',
    propertyNames: servers.propertyNames,
    additionalProperties: z.toJSONSchema(mcpServerEntry, { io: 'input', target: 'draft-7' }),
  };
  schema.required = (schema.required as string[]).filter((key) => key !== 'servers');
  schema.anyOf = [{ required: ['servers'] }, { required: ['mcpServers'] }];
  return {
    $schema: schema.$schema,
    title: 'mcp-gateway configuration (gateway.config.yaml)',
    ...(withPlaceholders(schema) as Json),
  };
}

/**
 * Numbers and booleans may be written as `${VAR}` (expanded at load) or as quoted digits; an editor must
 * not flag them.
 */
function withPlaceholders(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withPlaceholders);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === 'const' || key === 'enum' || key === 'default' ? value : withPlaceholders(value);
  const type = out.type;
  if (type === 'integer' || type === 'number') return { anyOf: [out, { type: 'string', pattern: '^\\s*-?\\d+\\s*$|\\$\\{' }] };
  if (type === 'boolean') return { anyOf: [out, { type: 'string', pattern: '^(true|false)$|\\$\\{' }] };
  return out;
}

export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
