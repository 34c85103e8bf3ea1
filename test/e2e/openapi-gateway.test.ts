// An OpenAPI server through the gateway: on /mcp beside a stdio server (prefixed names, calls carrying the
// configured ${VAR} header, -32602 before any request, operations: deny), config errors (two server kinds
// in one entry, a header with CR/LF, a document that does not load), and a reload that finds the document
// changed: the list changes and an open listen stream hears list_changed instead of being ended.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { startRestServer, type RestServer } from '../fixtures/openapi/rest-server.js';
import { tempDir } from '../temp.js';
import { fixture, openListen, post, request, ROOT, startTestGateway, until } from './harness.js';
import { FIXTURES } from './openapi-kit.js';

const PROFILES = { pets: { tools: ['pets__*'] }, find: { tools: ['pets__*'], search: true } };

describe('an OpenAPI server on /mcp beside a stdio server', () => {
  let rest: RestServer;
  let gateway: RunningGateway;
  const dir = tempDir('openapi-gateway-');
  const document = path.join(dir, 'pets.yaml');
  const servers = () => ({
    pets: {
      openapi: document,
      baseUrl: `${rest.url}/v1`,
      headers: { 'X-Api-Key': '${OPENAPI_TEST_KEY}' },
      operations: { deny: ['delete*', 'big', 'slow'] },
    },
    other: fixture('modern-server'),
  });

  before(async () => {
    process.env.OPENAPI_TEST_KEY = 'from-the-environment';
    copyFileSync(path.join(FIXTURES, 'petstore-3.0.yaml'), document);
    rest = await startRestServer();
    gateway = await startTestGateway(servers(), {}, { profiles: PROFILES });
  });
  after(async () => {
    await gateway?.close();
    await rest?.close();
    delete process.env.OPENAPI_TEST_KEY;
  });

  const names = async (): Promise<string[]> => {
    const answer = await post(`${gateway.url}/mcp`, request('tools/list'));
    return (answer.body.result.tools as { name: string }[]).map((tool) => tool.name);
  };

  test('both servers listed, the denied operations left out', async () => {
    assert.ok(await until(async () => (await names()).includes('other__echo'), 30_000), 'the stdio server lists');
    const listed = await names();
    for (const name of ['pets__listPets', 'pets__createPet', 'pets__showPetById', 'pets__updatePet'])
      assert.ok(listed.includes(name), `${name} in ${listed}`);
    for (const name of ['pets__deletePet', 'pets__big', 'pets__slow']) assert.ok(!listed.includes(name), name);
  });

  test('a call reaches the REST API with the configured header', async () => {
    const answer = await post(
      `${gateway.url}/mcp`,
      request('tools/call', { name: 'pets__showPetById', arguments: { petId: 'Rex' } }),
    );
    assert.deepEqual(answer.body.result.structuredContent, { id: 7, name: 'Rex' });
    assert.equal(rest.received.at(-1)!.headers['x-api-key'], 'from-the-environment');
  });

  test('arguments that do not fit: -32602, and the REST API sees nothing', async () => {
    const before = rest.received.length;
    const answer = await post(
      `${gateway.url}/mcp`,
      request('tools/call', { name: 'pets__showPetById', arguments: { petId: 42 } }),
    );
    assert.equal(answer.body.error.code, -32602);
    assert.equal(rest.received.length, before);
  });

  test('through a profile, and in search mode', async () => {
    const profile = await post(`${gateway.url}/profiles/pets/mcp`, request('tools/list'));
    const shown = (profile.body.result.tools as { name: string }[]).map((tool) => tool.name);
    assert.ok(shown.length > 0 && shown.every((name) => name.startsWith('pets__')), String(shown));
    const find = `${gateway.url}/profiles/find/mcp`;
    const search = request('tools/call', { name: 'search_tools', arguments: { query: 'info for a specific pet' } });
    let found: string[] = [];
    assert.ok(
      await until(async () => {
        const answer = await post(find, search);
        found = (answer.body.result?.structuredContent?.tools ?? []).map((tool: { name: string }) => tool.name);
        return found.includes('pets__showPetById');
      }, 20_000),
      `search_tools found ${found}`,
    );
    const called = await post(
      find,
      request('tools/call', {
        name: 'call_tool',
        arguments: { name: 'pets__showPetById', arguments: { petId: 'Tom' } },
      }),
    );
    assert.deepEqual(called.body.result.structuredContent, { id: 7, name: 'Tom' });
  });

  test(
    'a reload that finds the document changed: ' + 'the new tool is listed, listen streams hear list_changed',
    async () => {
      const listen = await openListen(`${gateway.url}/mcp`, { toolsListChanged: true });
      try {
        assert.ok(await until(() => listen.messages.length >= 1, 10_000), 'acknowledged');
        const text = readFileSync(document, 'utf8').replace('operationId: countPets', 'operationId: howManyPets');
        writeFileSync(document, text);
        await gateway.reload(
          parseConfig({ listen: { port: 0 }, servers: servers(), profiles: PROFILES }, 'test', ROOT),
        );
        assert.ok(
          await until(() => listen.messages.some((m) => m.method === 'notifications/tools/list_changed'), 10_000),
          JSON.stringify(listen.messages),
        );
        const listed = await names();
        assert.ok(listed.includes('pets__howManyPets') && !listed.includes('pets__countPets'), String(listed));
      } finally {
        listen.close();
      }
    },
  );
});

describe('a reload whose OpenAPI document does not load', () => {
  test('is refused whole: the running servers stay as they were', async () => {
    const rest = await startRestServer();
    const dir = tempDir('openapi-reload-');
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths: { /x: { get: { responses: 7 } } }\n');
    const good = { openapi: path.join(FIXTURES, 'petstore-3.0.yaml'), baseUrl: `${rest.url}/v1` };
    const gateway = await startTestGateway({ pets: good });
    try {
      const next = parseConfig(
        { listen: { port: 0 }, servers: { pets: { ...good, openapi: bad }, more: { ...good, prefix: 'more' } } },
        'test',
        ROOT,
      );
      await assert.rejects(gateway.reload(next), /servers\.pets: .*bad\.yaml is not valid/s);
      const answer = await post(
        `${gateway.url}/mcp`,
        request('tools/call', { name: 'pets__showPetById', arguments: { petId: 'Kept' } }),
      );
      assert.deepEqual(answer.body.result.structuredContent, { id: 7, name: 'Kept' });
      const listed = await post(`${gateway.url}/mcp`, request('tools/list'));
      const names = (listed.body.result.tools as { name: string }[]).map((tool) => tool.name);
      assert.ok(names.includes('pets__listPets') && !names.some((name) => name.startsWith('more__')), String(names));
    } finally {
      await gateway.close();
      await rest.close();
    }
  });
});

describe('config errors', () => {
  test('an entry naming two kinds of server says which', () => {
    assert.throws(
      () => parseConfig({ servers: { pets: { openapi: './x.yaml', command: 'node' } } }, 'test.yaml', ROOT, {}),
      /command and openapi each name a kind of server; give one/,
    );
  });

  test('a header value with CR or LF is refused, naming the key', () => {
    assert.throws(
      () =>
        parseConfig(
          { servers: { pets: { openapi: './x.yaml', headers: { 'X-Api-Key': 'k\r\nX-Other: 1' } } } },
          'test.yaml',
          ROOT,
          {},
        ),
      /servers\.pets\.headers\.X-Api-Key.*CR, LF or NUL/s,
    );
  });

  test("a relative document path is read from the config file's folder", () => {
    const config = parseConfig({ servers: { pets: { openapi: 'api/pets.yaml' } } }, 'test.yaml', '/etc/gw', {});
    const pets = config.servers.pets!;
    assert.equal(pets.transport, 'openapi');
    assert.equal(pets.transport === 'openapi' && pets.openapi, path.resolve('/etc/gw', 'api/pets.yaml'));
  });

  test('a document that does not load stops the start, naming the server and the place', async () => {
    const dir = tempDir('openapi-bad-');
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(
      bad,
      'openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths:\n  /x:\n    get:\n      responses: 7\n',
    );
    await assert.rejects(
      startTestGateway({ pets: { openapi: bad, baseUrl: 'http://127.0.0.1:9' } }),
      /servers\.pets: .*bad\.yaml is not valid/s,
    );
  });
});
