// gateway.config.schema.json: generated from the zod schema, committed, and checked against both.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { CONFIG_SCHEMA_FILE, configJsonSchema, configJsonSchemaText } from '../../src/config/schema.js';

const ROOT = new URL('../../', import.meta.url);
const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(configJsonSchema());

test('the committed gateway.config.schema.json is what the generator writes now', () => {
  const committed = readFileSync(new URL(CONFIG_SCHEMA_FILE, ROOT), 'utf8');
  assert.ok(
    committed === configJsonSchemaText(),
    `${CONFIG_SCHEMA_FILE} is out of date with src/config/config.ts: run npm run config-schema and commit the result`,
  );
});

test('the bundled config names the schema for editors, and validates against it (${VAR} numbers included)', () => {
  const text = readFileSync(new URL('gateway.config.yaml', ROOT), 'utf8');
  assert.match(text.split('\n')[0]!, /^# yaml-language-server: \$schema=\.\/gateway\.config\.schema\.json$/);
  assert.equal(validate(parseYaml(text)), true, JSON.stringify(validate.errors));
});

test('the schema refuses what the gateway refuses: unknown keys, wrong enums, out-of-range numbers', () => {
  const ok = { servers: { a: { command: 'node' } } };
  assert.equal(validate(ok), true, JSON.stringify(validate.errors));
  assert.equal(validate({ servers: { a: { command: 'node', timeoutMS: 5 } } }), false);
  assert.equal(validate({ ...ok, cache: { store: 'memcached' } }), false);
  assert.equal(validate({ ...ok, listen: { port: 70000 } }), false);
  assert.equal(validate({ ...ok, listen: { port: '${PORT:-8080}' } }), true);
  assert.equal(validate({ ...ok, listen: { port: 'eighty' } }), false);
  assert.equal(validate({}), false, 'a config needs servers or mcpServers');
});

test("the schema accepts a host's mcpServers map as Claude Desktop and Cursor write it", () => {
  const pasted = {
    mcpServers: {
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'], env: { DEBUG: '1' } },
      remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } },
      typed: { type: 'http', url: 'https://mcp.example.com/mcp' },
    },
  };
  assert.equal(validate(pasted), true, JSON.stringify(validate.errors));
});
