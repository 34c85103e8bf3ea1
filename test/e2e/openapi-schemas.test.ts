// OpenAPI documents as tool lists (bridge/openapi/): the Petstore in Swagger 2.0, OpenAPI 3.0 and 3.1 listed
// with the right schemas and annotations; names from operationId or method and path, collisions refused;
// a generated document of 300 operations; and what the loader refuses: an invalid document (naming the
// place), references outside the document's folder or to a URL (the listener there sees no request), an
// operation whose servers: names another origin.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { defProblems } from '../schema.js';
import { tempDir } from '../temp.js';
import { ask, documentWith, loadUpstream, toolsOf, writeDocument } from './openapi-kit.js';

const PET_SHOWN = {
  type: 'object',
  required: ['id', 'name'],
  properties: {
    id: { type: 'integer', format: 'int64' },
    name: { type: 'string' },
    tag: { type: ['string', 'null'] },
  },
};

describe('the Petstore as tools', () => {
  for (const file of ['petstore-2.0.yaml', 'petstore-3.0.yaml', 'petstore-3.1.yaml']) {
    test(`${file}: every operation a valid tool, schemas converted to JSON Schema 2020-12`, async () => {
      const upstream = await loadUpstream(file, { baseUrl: 'http://127.0.0.1:9/v1' });
      const response = await ask(upstream, 'tools/list');
      assert.ok('result' in response);
      assert.equal(response.result.ttlMs, 60_000);
      for (const tool of response.result.tools as unknown[]) assert.deepEqual(defProblems('Tool', tool), []);
      const tools = await toolsOf(upstream);
      assert.deepEqual(tools.showPetById.inputSchema, {
        type: 'object',
        properties: { petId: tools.showPetById.inputSchema.properties.petId },
        required: ['petId'],
      });
      assert.equal(tools.showPetById.inputSchema.properties.petId.type, 'string');
      // The answer's schema is the Pet, nullable tag as a type list, OpenAPI-only keywords gone.
      const shown = tools.showPetById.outputSchema;
      assert.deepEqual(shown.required, PET_SHOWN.required);
      assert.deepEqual(shown.properties.tag, PET_SHOWN.properties.tag);
      assert.equal(JSON.stringify(shown).includes('nullable'), false);
      // An array answer is wrapped: an outputSchema is an object.
      assert.equal(tools.listPets.outputSchema.type, 'object');
      assert.equal(tools.listPets.outputSchema.properties.result.type, 'array');
      assert.deepEqual(tools.listPets.annotations, { readOnlyHint: true, openWorldHint: true });
      // The JSON body's properties are arguments of their own (no name collides with a parameter).
      assert.deepEqual(tools.createPet.inputSchema.required, ['name']);
      assert.ok(tools.createPet.inputSchema.properties.name);
      assert.equal(tools.createPet.annotations.readOnlyHint, false);
      await upstream.close();
    });
  }

  test('3.0: boolean exclusiveMinimum, styles, PUT and DELETE annotations, a name from method and path', async () => {
    const tools = await toolsOf(await loadUpstream('petstore-3.0.yaml', { baseUrl: 'http://127.0.0.1:9/v1' }));
    assert.deepEqual(tools.showPetById.outputSchema.properties.weight, { type: 'number', exclusiveMinimum: 0 });
    assert.equal(tools.listPets.description, 'List all pets');
    assert.equal(
      tools.listPets.inputSchema.properties.limit.description,
      'How many items to return at one time (max 100)',
    );
    assert.deepEqual(tools.deletePet.annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
    assert.equal(tools.updatePet.annotations.idempotentHint, true);
    assert.equal(tools.updatePet.description, 'PUT /pets/{petId}');
    // No operationId: the name is made of the method and the path.
    assert.ok(tools.post_pets_petId_photo);
    assert.deepEqual(Object.keys(tools.post_pets_petId_photo.inputSchema.properties), ['petId', 'caption', 'tags']);
    // A JSON number answer is wrapped as { result }.
    assert.deepEqual(tools.countPets.outputSchema, {
      type: 'object',
      properties: { result: { type: 'integer' } },
      required: ['result'],
    });
  });
});

describe('names and bodies', () => {
  const dir = tempDir('openapi-names-');

  test('a JSON body whose property collides with a parameter is nested under body', async () => {
    const file = writeDocument(
      dir,
      'nested.yaml',
      documentWith({
        '/items/{id}': {
          put: {
            operationId: 'replace item!',
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { id: { type: 'string' }, label: { type: 'string' } } },
                },
              },
            },
            responses: { '200': { description: 'ok' } },
          },
        },
      }),
    );
    const tools = await toolsOf(await loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }));
    const tool = tools.replace_item;
    assert.ok(tool, `sanitised operationId; got ${Object.keys(tools)}`);
    assert.deepEqual(Object.keys(tool.inputSchema.properties), ['id', 'body']);
    assert.deepEqual(tool.inputSchema.required, ['id', 'body']);
  });

  test('two operations with one name refuse the server, naming both', async () => {
    const file = writeDocument(
      dir,
      'collide.yaml',
      documentWith({
        '/a': { get: { operationId: 'get.thing', responses: { '200': { description: 'ok' } } } },
        '/b': { get: { operationId: 'get_thing', responses: { '200': { description: 'ok' } } } },
      }),
    );
    await assert.rejects(loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }), (error: Error) => {
      assert.match(error.message, /GET \/a \(operationId get\.thing\) and GET \/b \(operationId get_thing\)/);
      assert.match(error.message, /servers\.pets\.operations\.deny/);
      return true;
    });
  });

  test('names are cut to the budget the prefix leaves', async () => {
    const file = writeDocument(
      dir,
      'long.yaml',
      documentWith({ '/x': { get: { operationId: 'a'.repeat(100), responses: { '200': { description: 'ok' } } } } }),
    );
    const tools = await toolsOf(await loadUpstream(file, { baseUrl: 'http://127.0.0.1:9', nameBudget: 20 }));
    assert.deepEqual(Object.keys(tools), ['a'.repeat(20)]);
  });

  test('a generated document of 300 operations lists 300 valid tools', async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) {
      const id = { name: 'id', in: 'path', required: true, schema: { type: 'integer' } };
      const thing = { $ref: '#/components/schemas/Thing' };
      paths[`/things${i}/{id}`] = {
        get: { operationId: `getThing${i}`, parameters: [id], responses: { '200': json(thing) } },
        put: {
          operationId: `putThing${i}`,
          parameters: [id],
          requestBody: json(thing),
          responses: { '200': json(thing) },
        },
        delete: { parameters: [id], responses: { '204': { description: 'gone' } } },
      };
    }
    const schemas = { Thing: { type: 'object', properties: { name: { type: 'string', nullable: true } } } };
    const file = writeDocument(dir, 'large.yaml', documentWith(paths, { components: { schemas } }));
    const response = await ask(await loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }), 'tools/list');
    assert.ok('result' in response);
    const tools = response.result.tools as any[];
    assert.equal(tools.length, 300);
    assert.equal(new Set(tools.map((tool) => tool.name)).size, 300);
    assert.ok(tools.some((tool) => tool.name === 'delete_things42_id'));
    for (const tool of tools) assert.deepEqual(defProblems('Tool', tool), [], tool.name);
  });
});

function json(schema: unknown) {
  return { description: 'json', content: { 'application/json': { schema } } };
}

describe('what the loader refuses', () => {
  const dir = tempDir('openapi-refuse-');
  const seen: string[] = [];
  let port = 0;
  const listener = createServer((request, response) => {
    seen.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'application/yaml' });
    response.end('type: object\n');
  });
  before(async () => {
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  const withSchemaRef = (ref: string) =>
    documentWith({
      '/x': { get: { operationId: 'x', responses: { '200': json({ $ref: ref }) } } },
    });

  test('a $ref to an http URL: refused at load, and the listener sees no request', async () => {
    const file = writeDocument(dir, 'remote-ref.yaml', withSchemaRef(`http://127.0.0.1:${port}/x.yaml`));
    await assert.rejects(
      loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }),
      /refers to "http:\/\/127\.0\.0\.1:\d+\/x\.yaml"/,
    );
    assert.deepEqual(seen, []);
  });

  test("a $ref out of the document's folder is refused; one into it is followed", async () => {
    const inner = path.join(dir, 'inner');
    mkdirSync(inner, { recursive: true });
    writeDocument(dir, 'outside.yaml', { type: 'object' });
    const escaping = writeDocument(inner, 'escaping.yaml', withSchemaRef('../outside.yaml'));
    await assert.rejects(loadUpstream(escaping, { baseUrl: 'http://127.0.0.1:9' }), /refers to "\.\.\/outside\.yaml"/);
    const absolute = writeDocument(inner, 'absolute.yaml', withSchemaRef(path.join(dir, 'outside.yaml')));
    await assert.rejects(loadUpstream(absolute, { baseUrl: 'http://127.0.0.1:9' }), /must stay within the document/);
    // A file beside the document that itself refers to a URL is refused too.
    writeDocument(inner, 'relay.yaml', { $ref: `http://127.0.0.1:${port}/y.yaml` });
    const relayed = writeDocument(inner, 'relayed.yaml', withSchemaRef('./relay.yaml'));
    await assert.rejects(loadUpstream(relayed, { baseUrl: 'http://127.0.0.1:9' }), /relay\.yaml refers to/);
    writeDocument(inner, 'thing.yaml', { type: 'object', properties: { n: { type: 'integer' } } });
    const fine = writeDocument(inner, 'fine.yaml', withSchemaRef('./thing.yaml'));
    const tools = await toolsOf(await loadUpstream(fine, { baseUrl: 'http://127.0.0.1:9' }));
    assert.deepEqual(tools.x.outputSchema, { type: 'object', properties: { n: { type: 'integer' } } });
    assert.deepEqual(seen, []);
  });

  test('an operation whose servers: names another origin is left out; the listener sees no request', async () => {
    const file = writeDocument(
      dir,
      'elsewhere.yaml',
      documentWith({
        '/x': {
          get: {
            operationId: 'x',
            servers: [{ url: `http://127.0.0.1:${port}` }],
            responses: { '200': { description: 'ok' } },
          },
        },
        '/y': { get: { operationId: 'y', responses: { '200': { description: 'ok' } } } },
      }),
    );
    const tools = await toolsOf(await loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }));
    assert.deepEqual(Object.keys(tools), ['y']);
    assert.deepEqual(seen, []);
  });

  test('an invalid document is a load error that names the place', async () => {
    const file = writeDocument(
      dir,
      'invalid.yaml',
      documentWith({ '/x': { get: { operationId: 'x', parameters: [{ name: 'q', in: 'querry' }], responses: {} } } }),
    );
    await assert.rejects(loadUpstream(file, { baseUrl: 'http://127.0.0.1:9' }), (error: Error) => {
      assert.match(error.message, /^servers\.pets: .*invalid\.yaml is not valid/);
      assert.match(error.message, /"in": "querry"/);
      return true;
    });
  });

  test('no server in the document and no baseUrl: a load error naming servers.<name>.baseUrl', async () => {
    const file = writeDocument(dir, 'serverless.yaml', withSchemaRef('#/paths'));
    await assert.rejects(loadUpstream(file), /set servers\.pets\.baseUrl/);
  });

  test('a document that is not OpenAPI says which versions are read', async () => {
    const file = writeDocument(dir, 'other.yaml', { asyncapi: '2.0.0' });
    await assert.rejects(loadUpstream(file), /Swagger 2\.0 and OpenAPI 3\.0 and 3\.1/);
  });
});

describe('a document read from a URL', () => {
  const served = new Map<string, string>();
  const hits: string[] = [];
  let base = '';
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    const text = served.get(request.url ?? '');
    if (request.url === '/moved') {
      response.writeHead(302, { location: `${base}/pets.yaml` });
      return response.end();
    }
    response.writeHead(text === undefined ? 404 : 200, { 'content-type': 'application/yaml' });
    response.end(text ?? 'not here');
  });
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const op = { operationId: 'x', responses: { '200': json({ $ref: '#/components/schemas/T' }) } };
    const components = { schemas: { T: { type: 'object' } } };
    served.set(
      '/pets.yaml',
      JSON.stringify(documentWith({ '/x': { get: op } }, { servers: [{ url: '/api' }], components })),
    );
    served.set(
      '/refers.yaml',
      JSON.stringify(documentWith({ '/x': { get: { ...op, responses: { '200': json({ $ref: 'other.yaml' }) } } } })),
    );
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("loopback http is read; a relative server URL is taken from the document's address", async () => {
    const upstream = await loadUpstream(`${base}/pets.yaml`);
    const tools = await toolsOf(upstream);
    assert.deepEqual(tools.x.outputSchema, { type: 'object' });
    await upstream.close();
  });

  test('a URL document may refer only within itself; redirects and plain http elsewhere are refused', async () => {
    await assert.rejects(loadUpstream(`${base}/refers.yaml`), /may only refer within itself/);
    assert.ok(!hits.includes('/other.yaml'));
    await assert.rejects(loadUpstream(`${base}/moved`), /answered HTTP 302/);
    await assert.rejects(
      loadUpstream('http://api.example.invalid/pets.yaml'),
      /plain http to another host; give an https/,
    );
  });
});
