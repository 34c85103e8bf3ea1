// An OpenAPI document cannot send the gateway's requests anywhere but baseUrl's origin (issue 49): a listener
// on another loopback port records every request, and a document names that port four ways (an operation's
// own servers:, its path item's servers:, a server URL whose variables default to it, a path key that reads
// as an authority) beside a $ref to it.
// The $ref refuses the load; without it the document loads, those operations are neither listed nor callable
// (through /mcp or the server's own endpoint, where the refusal says why and which setting to change), and the
// listener sees nothing, while an operation on baseUrl's origin is called as usual.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { startRestServer, type RestServer } from '../fixtures/openapi/rest-server.js';
import { recordingLog } from '../recording-log.js';
import { tempDir } from '../temp.js';
import { post, request, ROOT } from './harness.js';
import { documentWith, writeDocument } from './openapi-kit.js';

const ok = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } };

describe("requests go only to baseUrl's origin", () => {
  const dir = tempDir('openapi-origin-');
  const seen: string[] = [];
  const listener = createServer((incoming, response) => {
    seen.push(`${incoming.method} ${incoming.url}`);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"reached":"the listener"}');
  });
  let port = 0;
  let rest: RestServer;
  let gateway: RunningGateway | undefined;
  const logged = recordingLog();

  /** The document: one operation on baseUrl's origin, three that name the listener's port. */
  const paths = () => ({
    '/pets/{petId}': {
      get: {
        operationId: 'showPetById',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: ok,
      },
    },
    // A path key that reads as an authority is still a path below baseUrl.
    [`//127.0.0.1:${port}/x`]: { get: { operationId: 'authorityLike', responses: ok } },
    '/own': {
      get: { operationId: 'ownServer', servers: [{ url: `http://127.0.0.1:${port}` }], responses: ok },
    },
    '/item': {
      servers: [{ url: `http://127.0.0.1:${port}/api` }],
      post: { operationId: 'pathItemServer', responses: ok },
    },
    '/templated': {
      get: {
        operationId: 'templatedServer',
        servers: [
          { url: 'http://{host}:{port}', variables: { host: { default: '127.0.0.1' }, port: { default: `${port}` } } },
        ],
        responses: ok,
      },
    },
  });
  const pets = (document: string) => ({ openapi: document, baseUrl: `${rest.url}/v1` });
  const start = (document: string) =>
    startGateway(parseConfig({ listen: { port: 0 }, servers: { pets: pets(document) } }, 'test', ROOT), logged.log);

  before(async () => {
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as AddressInfo).port;
    rest = await startRestServer();
    gateway = await start(writeDocument(dir, 'servers.yaml', documentWith(paths())));
  });
  after(async () => {
    await gateway?.close();
    await rest?.close();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  });

  test('with a $ref to the listener as well: the load is refused, naming the reference', async () => {
    const schema = { $ref: `http://127.0.0.1:${port}/x.yaml` };
    const withRef = documentWith({
      ...paths(),
      '/ref': {
        get: {
          operationId: 'ref',
          responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } },
        },
      },
    });
    const file = writeDocument(dir, 'with-ref.yaml', withRef);
    await assert.rejects(start(file), /servers\.pets: .*refers to "http:\/\/127\.0\.0\.1:\d+\/x\.yaml"/s);
    assert.deepEqual(seen, []);
  });

  test('without it: the document loads, each such operation is left out, and the log says what to do', async () => {
    assert.ok(gateway, 'the gateway started');
    const answer = await post(`${gateway.url}/mcp`, request('tools/list'));
    const names = (answer.body.result.tools as { name: string }[]).map((tool) => tool.name);
    assert.deepEqual(names, ['pets__showPetById', 'pets__authorityLike']);
    const warnings = logged.warnings().filter((line) => line.includes(`http://127.0.0.1:${port}`));
    assert.equal(warnings.length, 3, warnings.join('\n'));
    for (const [operation, tool] of [
      ['GET /own', 'ownServer'],
      ['POST /item', 'pathItemServer'],
      ['GET /templated', 'templatedServer'],
    ] as const) {
      const warning = warnings.find((line) => line.includes(operation));
      assert.ok(warning, `${operation} in ${warnings.join('\n')}`);
      assert.match(warning, new RegExp(`not ${rest.url.replace(/[.]/g, '\\.')}`));
      assert.match(warning, new RegExp(`servers\\.pets\\.operations\\.deny: \\[${tool}\\]`));
      assert.match(warning, /a server entry of its own/);
    }
    assert.deepEqual(seen, []);
  });

  test(
    'calling one through /mcp or the server endpoint is refused, saying why; ' + 'the listener sees no request',
    async () => {
      assert.ok(gateway, 'the gateway started');
      const before = rest.received.length;
      for (const name of ['pets__ownServer', 'pets__pathItemServer', 'pets__templatedServer']) {
        const answer = await post(`${gateway.url}/mcp`, request('tools/call', { name, arguments: {} }));
        assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
        // /mcp gives the server's own account under the prefixed name (docs/openapi.md, "Where a call goes").
        const message: string = answer.body.error.message;
        assert.match(message, new RegExp(`^Tool ${name} is not offered: servers\\.pets: `));
        assert.match(message, /requests go only to baseUrl's origin/);
      }
      for (const name of ['ownServer', 'pathItemServer', 'templatedServer']) {
        const answer = await post(`${gateway.url}/servers/pets/mcp`, request('tools/call', { name, arguments: {} }));
        assert.equal(answer.body.error?.code, -32602, JSON.stringify(answer.body));
        const message: string = answer.body.error.message;
        assert.match(message, new RegExp(`names its own server http://127\\.0\\.0\\.1:${port}`));
        assert.match(message, /requests go only to baseUrl's origin/);
        assert.match(message, /servers\.pets\.baseUrl/);
      }
      // The operations on baseUrl's origin are called as usual (the path like an authority reaches the REST server,
      // which does not serve it), and nothing of the above reached either server.
      const shown = await post(
        `${gateway.url}/mcp`,
        request('tools/call', { name: 'pets__showPetById', arguments: { petId: 'Rex' } }),
      );
      assert.deepEqual(shown.body.result.structuredContent, { id: 7, name: 'Rex' });
      const authorityLike = await post(
        `${gateway.url}/mcp`,
        request('tools/call', { name: 'pets__authorityLike', arguments: {} }),
      );
      assert.match(authorityLike.body.result.content[0].text, /^HTTP 404 from http:\/\/127\.0\.0\.1:\d+\/v1\/\/127/);
      assert.deepEqual(
        rest.received.slice(before).map((received) => `${received.method} ${received.url}`),
        ['GET /v1/pets/Rex', `GET /v1//127.0.0.1:${port}/x`],
      );
      assert.deepEqual(seen, []);
    },
  );
});
