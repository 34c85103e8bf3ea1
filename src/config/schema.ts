// The JSON Schema of gateway.config.yaml, generated from the zod schema that validates it (so editors
// complete and check the same keys the gateway accepts). `npm run config-schema` writes it to
// gateway.config.schema.json; a test fails when the committed file and this generator disagree.
import { z } from 'zod';
import { HOST_TYPES } from './mcp-servers.js';
import { configSchema } from './config-schema.js';

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
  const branches = (servers.additionalProperties as Json).oneOf as Json[];
  for (const branch of branches) branch.required = (branch.required as string[]).filter((key) => key !== 'transport');
  // VS Code writes `servers: { name: { type, … } }`, and `disabled` with it; the loader adopts both.
  servers.additionalProperties = hostEntry(branches, { disabledNeedsType: true });
  properties.mcpServers = {
    description: 'Servers as Claude Desktop, Claude Code and Cursor list them; merged into servers',
    type: 'object',
    propertyNames: servers.propertyNames,
    additionalProperties: hostEntry(branches, { disabledNeedsType: false }),
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
 * A server entry as the loader takes it (src/config/mcp-servers.ts): the gateway's own keys, a host's `type`
 * (which must agree with `command` or `url`) and `disabled: true`, which drops the entry unread. Host-only
 * keys such as `autoApprove` are refused, as the loader refuses them.
 */
function hostEntry(branches: Json[], { disabledNeedsType }: { disabledNeedsType: boolean }): Json {
  const withHostKeys = branches.map((branch) => {
    const transport = ((branch.properties as Json).transport as Json).const;
    const types = Object.keys(HOST_TYPES).filter((type) => HOST_TYPES[type] === transport);
    return {
      ...branch,
      properties: {
        ...(branch.properties as Json),
        // An `openapi:` server is no host's kind: hosts have no `type` for it.
        ...(types.length ? { type: { type: 'string', enum: types } } : {}),
        disabled: { type: 'boolean' },
      },
      ...(disabledNeedsType && types.length ? { dependencies: { disabled: ['type'] } } : {}),
      // A `url` alone is Streamable HTTP to the loader; HTTP+SSE must be named, by `type` or `transport`.
      ...(transport === 'sse' ? { anyOf: [{ required: ['type'] }, { required: ['transport'] }] } : {}),
    };
  });
  const dropped = {
    type: 'object',
    properties: { disabled: { const: true } },
    required: disabledNeedsType ? ['disabled', 'type'] : ['disabled'],
  };
  return { anyOf: [dropped, { oneOf: withHostKeys }] };
}

/** `${VAR}`, `${VAR:-default}` and a host's `${env:VAR}`: what the loader expands before it validates. */
const PLACEHOLDER = '\\$\\{(env:)?[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}';

/**
 * Any value may be written as `${VAR}` (expanded at load, then validated), numbers and booleans also as quoted
 * digits or words: an editor must not flag a value the gateway would accept. Strings with constraints (a
 * pattern, a format, a length, an enum) accept a placeholder besides what they allow; `const`s (the
 * transport that tells server kinds apart) do not.
 */
function withPlaceholders(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withPlaceholders);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === 'const' || key === 'enum' || key === 'default' ? value : withPlaceholders(value);
  const type = out.type;
  const placeholder = { type: 'string', pattern: PLACEHOLDER };
  if (type === 'integer' || type === 'number')
    return { anyOf: [out, { type: 'string', pattern: `^\\s*-?\\d+\\s*$|${PLACEHOLDER}` }] };
  if (type === 'boolean') return { anyOf: [out, { type: 'string', pattern: `^(true|false)$|${PLACEHOLDER}` }] };
  if (
    type === 'string' &&
    out.const === undefined &&
    ['pattern', 'format', 'minLength', 'maxLength', 'enum'].some((key) => key in out)
  ) {
    return { anyOf: [out, placeholder] };
  }
  return out;
}

export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
