// OpenAPI tool calls against a local REST server (test/fixtures/openapi/rest-server.ts) that records what
// arrives: each parameter style as the document says, JSON and form bodies, configured headers, answers of
// each kind, errors, arguments refused before any request, the timeout, the caller's cancellation, the size
// cap, and a redirect to another origin that is not followed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenApiUpstream } from '../../bridge/openapi/openapi-upstream.js';
import { defProblems } from '../schema.js';
import { startRestServer, type RestServer } from '../fixtures/openapi/rest-server.js';
import { eventually } from './harness.js';
import { ask, call, loadUpstream } from './openapi-kit.js';

let rest: RestServer;
let pets: OpenApiUpstream;
const last = () => rest.received.at(-1)!;

before(async () => {
  rest = await startRestServer();
  pets = await loadUpstream('petstore-3.0.yaml', {
    baseUrl: `${rest.url}/v1`,
    headers: { 'X-Api-Key': 'secret-key' },
    timeoutMs: 5_000,
    maxResponseBytes: 4_096,
  });
  await pets.start();
});
after(async () => {
  await pets.close();
  await rest.close();
});

describe('parameters arrive as the document says', () => {
  test('query: form exploded and not, deepObject, pipeDelimited; header; cookie', async () => {
    const result = await call(pets, 'listPets', {
      limit: 5,
      tags: ['a b', 'c&d'],
      ids: [1, 2],
      filter: { kind: 'dog', age: 3 },
      sort: ['name', 'age'],
      'X-Request-Tag': 'tagged',
      session: 'a;b',
    });
    assert.equal(result.isError, false);
    const { method, url, headers } = last();
    assert.equal(method, 'GET');
    assert.equal(
      url,
      '/v1/pets?limit=5&tags=a%20b&tags=c%26d&ids=1,2&filter%5Bkind%5D=dog&filter%5Bage%5D=3&sort=name%7Cage',
    );
    assert.equal(headers['x-request-tag'], 'tagged');
    assert.equal(headers.cookie, 'session=a%3Bb');
    assert.equal(headers['x-api-key'], 'secret-key');
    assert.match(String(headers.accept), /^application\/json/);
  });

  test('path parameters are encoded: no value adds a segment or climbs', async () => {
    await call(pets, 'showPetById', { petId: 'a/b?c#d' });
    assert.equal(last().url, '/v1/pets/a%2Fb%3Fc%23d');
    await call(pets, 'showPetById', { petId: '..' });
    assert.equal(last().url, '/v1/pets/%2E%2E');
  });

  test('Swagger 2.0: collectionFormat multi and csv', async () => {
    const swagger = await loadUpstream('petstore-2.0.yaml', { baseUrl: `${rest.url}/v1` });
    await call(swagger, 'listPets', { tags: ['x', 'y'], ids: [3, 4] });
    assert.equal(last().url, '/v1/pets?tags=x&tags=y&ids=3,4');
    await call(swagger, 'uploadPhoto', { petId: '9', caption: 'hi there' });
    assert.equal(last().body, 'caption=hi+there');
    assert.equal(last().headers['content-type'], 'application/x-www-form-urlencoded');
    await swagger.close();
  });

  test('a header argument with CR or LF is refused before any request (-32602)', async () => {
    const before = rest.received.length;
    const response = await ask(pets, 'tools/call', {
      name: 'listPets',
      arguments: { 'X-Request-Tag': 'x\r\nX-Injected: yes' },
    });
    assert.ok('error' in response);
    assert.equal(response.error.code, -32602);
    assert.match(response.error.message, /CR, LF or NUL/);
    assert.equal(rest.received.length, before);
  });

  test('configured headers win over a header parameter of the same name', async () => {
    const upstream = await loadUpstream('petstore-3.0.yaml', {
      baseUrl: `${rest.url}/v1`,
      headers: { 'X-Request-Tag': 'configured' },
    });
    await call(upstream, 'listPets', { 'X-Request-Tag': 'from-caller' });
    assert.equal(last().headers['x-request-tag'], 'configured');
    await upstream.close();
  });
});

describe('bodies and answers', () => {
  test('a JSON body from flattened arguments; a JSON object answer is structuredContent and text', async () => {
    const result = await call(pets, 'createPet', { name: 'Tom', tag: null });
    assert.equal(last().method, 'POST');
    assert.equal(last().headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(last().body), { name: 'Tom', tag: null });
    assert.deepEqual(result.structuredContent, { id: 2, name: 'Tom', tag: null });
    assert.deepEqual(JSON.parse(result.content[0].text), { id: 2, name: 'Tom', tag: null });
    assert.deepEqual(defProblems('CallToolResult', result), []);
  });

  test(
    "an answer the operation's response schema refuses is a tool error keeping its text and naming " + 'the field',
    async () => {
      const result = await call(pets, 'showPetById', { petId: 'undocumented' });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent, undefined, 'no structured content the outputSchema refuses');
      assert.deepEqual(JSON.parse(result.content[0].text), { id: 'seven', name: 'Odd' });
      assert.match(result.content[1].text, /does not match the response schema .*\(the answer\.id must be integer\)/);
      assert.match(result.content[1].text, /servers\.\S+\.openapi/);
      assert.deepEqual(defProblems('CallToolResult', result), []);
      // The documented answer of the same operation is structured content, as before.
      assert.deepEqual((await call(pets, 'showPetById', { petId: 'Rex' })).structuredContent, { id: 7, name: 'Rex' });
    },
  );

  test('an array or number answer is wrapped as { result }', async () => {
    assert.deepEqual((await call(pets, 'listPets', {})).structuredContent, {
      result: [{ id: 1, name: 'Rex', tag: null }],
    });
    assert.deepEqual((await call(pets, 'countPets', {})).structuredContent, { result: 3 });
  });

  test('a form body; a binary answer is an embedded resource', async () => {
    const result = await call(pets, 'post_pets_petId_photo', { petId: '5', caption: 'a&b', tags: ['x', 'y'] });
    assert.equal(last().url, '/v1/pets/5/photo');
    assert.equal(last().body, 'caption=a%26b&tags=x&tags=y');
    assert.equal(result.content[0].type, 'resource');
    assert.equal(result.content[0].resource.mimeType, 'image/png');
    assert.equal(result.content[0].resource.blob, Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64'));
    assert.deepEqual(defProblems('CallToolResult', result), []);
  });

  test('text and empty answers are text', async () => {
    assert.deepEqual((await call(pets, 'slow', { ms: 1 })).content, [{ type: 'text', text: 'slept' }]);
    const deleted = await call(pets, 'deletePet', { petId: '3' });
    assert.equal(last().method, 'DELETE');
    assert.deepEqual(deleted, {
      resultType: 'complete',
      content: [{ type: 'text', text: 'HTTP 204' }],
      isError: false,
    });
  });

  test('a non-2xx answer is a tool error with the status and the body', async () => {
    const result = await call(pets, 'showPetById', { petId: 'missing' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^HTTP 404 from http:\/\/127\.0\.0\.1:\d+\/v1\/pets\/missing: .*no such pet/);
  });

  test('arguments that do not match the schema: -32602 and no request', async () => {
    const before = rest.received.length;
    for (const args of [{}, { petId: 5 }]) {
      const response = await ask(pets, 'tools/call', { name: 'showPetById', arguments: args });
      assert.ok('error' in response, JSON.stringify(response));
      assert.equal(response.error.code, -32602);
      assert.match(response.error.message, /Invalid arguments for tool showPetById/);
    }
    const limit = await ask(pets, 'tools/call', { name: 'listPets', arguments: { limit: 1000 } });
    assert.ok('error' in limit && /limit must be <= 100/.test(limit.error.message), JSON.stringify(limit));
    const unknown = await ask(pets, 'tools/call', { name: 'nope', arguments: {} });
    assert.ok('error' in unknown && unknown.error.code === -32602);
    assert.equal(rest.received.length, before);
  });
});

describe('limits', () => {
  test('a REST API slower than timeoutMs: a tool error naming the key, and the request is abandoned', async () => {
    const result = await call(pets, 'slow', { ms: 60_000 });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /within 5000 ms \(servers\.pets\.timeoutMs\)/);
    await eventually(() => rest.abandoned.some((url) => url === '/v1/slow?ms=60000'), 10_000);
  });

  test('the caller cancelling ends the request on the wire', async () => {
    const controller = new AbortController();
    const answer = ask(pets, 'tools/call', { name: 'slow', arguments: { ms: 59_000 } }, { signal: controller.signal });
    await eventually(() => rest.received.some((request) => request.url === '/v1/slow?ms=59000'), 10_000);
    controller.abort();
    const response = await answer;
    assert.ok('error' in response);
    assert.match(response.error.message, /cancelled/);
    await eventually(() => rest.abandoned.includes('/v1/slow?ms=59000'), 10_000);
  });

  test('an answer past maxResponseBytes is refused, naming the key', async () => {
    const fits = await call(pets, 'big', { bytes: 4_000 });
    assert.equal(fits.isError, false);
    const result = await call(pets, 'big', { bytes: 100_000 });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /larger than 4096 bytes \(servers\.pets\.maxResponseBytes\)/);
  });

  test('a redirect to another origin is not followed: the listener there sees no request', async () => {
    const seen: string[] = [];
    const elsewhere = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.end('{}');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    rest.redirectTo = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/stolen`;
    try {
      const result = await call(pets, 'showPetById', { petId: 'moved' });
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /^HTTP 302/);
      assert.deepEqual(seen, []);
    } finally {
      await new Promise<void>((resolve) => elsewhere.close(() => resolve()));
    }
  });
});
