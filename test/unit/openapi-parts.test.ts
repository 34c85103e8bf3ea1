// The pure parts of bridge/openapi/: schema conversion to JSON Schema 2020-12 (nullable, draft 4 bounds,
// examples, a schema that refers to itself), request serialisation of the styles the Petstore fixtures do
// not cover (label, matrix, spaceDelimited, exploded objects), Swagger 2.0 formData by what the operation
// consumes, server URL variables, and operations: allow/deny through the factory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { operationsOf, type ParameterSpec, serverUrlOf } from '../../bridge/openapi/operations.js';
import { buildRequest } from '../../bridge/openapi/request.js';
import { toJsonSchema } from '../../bridge/openapi/schema-convert.js';
import { planTool } from '../../bridge/openapi/tools.js';
import { parseConfig } from '../../src/config/config.js';
import { createUpstream } from '../../src/upstream-factory.js';
import { silentLog } from '../../infra/log.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('3.0 schemas: nullable, boolean exclusive bounds, example, OpenAPI-only keywords', () => {
  assert.deepEqual(
    toJsonSchema(
      {
        type: 'object',
        properties: {
          a: { type: 'string', nullable: true, example: 'x', 'x-internal': true },
          b: { enum: ['p', 'q'], type: 'string', nullable: true },
          c: { allOf: [{ $ref: 'ignored' }], nullable: true },
          d: { type: 'integer', minimum: 1, exclusiveMinimum: true, maximum: 9, exclusiveMaximum: false },
        },
        discriminator: { propertyName: 'a' },
        xml: { name: 'thing' },
      },
      'openapi30',
    ),
    {
      type: 'object',
      properties: {
        a: { type: ['string', 'null'], examples: ['x'] },
        b: { enum: ['p', 'q', null], type: ['string', 'null'] },
        c: { anyOf: [{ allOf: [{ $ref: 'ignored' }] }, { type: 'null' }] },
        d: { type: 'integer', exclusiveMinimum: 1, maximum: 9 },
      },
    },
  );
});

test('3.1 schemas are copied as they are (numeric exclusive bounds kept); a cycle becomes {} where it recurs', () => {
  assert.deepEqual(toJsonSchema({ type: 'number', exclusiveMinimum: 0 }, 'openapi31'), {
    type: 'number',
    exclusiveMinimum: 0,
  });
  const node: Record<string, unknown> = { type: 'object', properties: {} };
  (node.properties as Record<string, unknown>).child = node;
  assert.deepEqual(toJsonSchema(node, 'openapi30'), { type: 'object', properties: { child: {} } });
});

test('Swagger 2.0: x-nullable and type file', () => {
  assert.deepEqual(toJsonSchema({ type: 'string', 'x-nullable': true }, 'swagger2'), { type: ['string', 'null'] });
  assert.deepEqual(toJsonSchema({ type: 'file' }, 'swagger2'), { type: 'string', contentEncoding: 'base64' });
});

function parameter(name: string, where: ParameterSpec['in'], style: string, explode: boolean): ParameterSpec {
  return { name, in: where, required: false, schema: {}, style, explode };
}

function requestFor(parameters: ParameterSpec[], args: Record<string, unknown>) {
  const plan = planTool('t', { method: 'GET', path: '/x/{p}', parameters, accept: 'application/json' });
  return buildRequest(plan, args, '/base/');
}

test('Swagger 2.0 formData: a urlencoded form body, none when the operation consumes only multipart', () => {
  const field = { name: 'note', in: 'formData', type: 'string', required: true };
  const operation = (consumes: string[]) =>
    operationsOf({ paths: { '/x': { post: { consumes, parameters: [field], responses: {} } } } }, 'swagger2')[0]!;
  const form = operation(['application/x-www-form-urlencoded', 'multipart/form-data']).body;
  assert.equal(form?.kind, 'form');
  assert.deepEqual(form?.schema, { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] });
  assert.equal(operation(['multipart/form-data']).body, undefined);
  assert.equal(operation([]).body?.kind, 'form');
});

test("a Server Object's url: each variable at its default, one without a default left as written", () => {
  const server = {
    url: 'https://{region}.api.test:{port}/{v}',
    variables: { region: { default: 'eu' }, port: { default: 8443 } },
  };
  assert.equal(serverUrlOf(server), 'https://eu.api.test:8443/{v}');
  assert.equal(serverUrlOf({ url: '' }), undefined);
  assert.equal(serverUrlOf(undefined), undefined);
});

test('path styles: simple, label, matrix, exploded and not', () => {
  const cases: [string, boolean, unknown, string][] = [
    ['simple', false, [3, 4], '/base/x/3,4'],
    ['simple', true, { a: 1, b: 2 }, '/base/x/a=1,b=2'],
    ['simple', false, { a: 1, b: 2 }, '/base/x/a,1,b,2'],
    ['label', false, [3, 4], '/base/x/.3,4'],
    ['label', true, [3, 4], '/base/x/.3.4'],
    ['matrix', false, [3, 4], '/base/x/;p=3,4'],
    ['matrix', true, [3, 4], '/base/x/;p=3;p=4'],
    ['matrix', true, { a: 1 }, '/base/x/;a=1'],
  ];
  for (const [style, explode, value, expected] of cases)
    assert.equal(
      requestFor([parameter('p', 'path', style, explode)], { p: value }).path,
      expected,
      `${style} ${explode}`,
    );
});

test('query styles: spaceDelimited, exploded object, form object not exploded; absent arguments are left out', () => {
  const request = requestFor(
    [
      parameter('p', 'path', 'simple', false),
      parameter('s', 'query', 'spaceDelimited', false),
      parameter('o', 'query', 'form', true),
      parameter('f', 'query', 'form', false),
      parameter('absent', 'query', 'form', true),
    ],
    { p: 'v', s: ['a', 'b'], o: { x: 1, y: 'z w' }, f: { k: 'v' } },
  );
  assert.equal(request.path, '/base/x/v?s=a%20b&x=1&y=z%20w&f=k,v');
});

test('operations: allow and deny globs, deny winning, match the tool name or the operationId', async () => {
  const config = parseConfig(
    {
      servers: {
        pets: {
          openapi: 'test/fixtures/openapi/petstore-3.0.yaml',
          baseUrl: 'http://127.0.0.1:9/v1',
          operations: { allow: ['list*', 'show*', 'post_*', 'deletePet'], deny: ['delete*'] },
        },
      },
    },
    'test.yaml',
    ROOT,
    {},
  );
  const upstream = await createUpstream('pets', config.servers.pets!, silentLog, []);
  const response = await upstream.request({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  assert.ok('result' in response);
  const names = (response.result.tools as { name: string }[]).map((tool) => tool.name);
  assert.deepEqual(names, ['listPets', 'showPetById', 'post_pets_petId_photo']);
  await upstream.close();
  assert.equal(path.isAbsolute((config.servers.pets as { openapi: string }).openapi), true);
});
