// A real public API description of a few hundred operations through the gateway (issue 49): Gitea's Swagger
// 2.0 document (308 operations, test/fixtures/openapi/README.md) loads through the parser, lists one valid
// tool per operation (names unique and within 64 characters, every schema a JSON Schema 2020-12 that ajv
// compiles with strictSchema), and three calls reach a local stand-in of the API with the path, query and body the
// document describes. One gateway start for the file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parseConfig } from '../../src/config/config.js';
import { type RunningGateway, startGateway } from '../../src/gateway.js';
import { recordingLog } from '../recording-log.js';
import { defProblems } from '../schema.js';
import { post, request, ROOT } from './harness.js';
import { FIXTURES } from './openapi-kit.js';

const DOCUMENT = path.join(FIXTURES, 'gitea-swagger-2.0.json');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

interface Arrived {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Gitea's API as far as these calls need it: every request recorded, a JSON answer for each. */
async function startGiteaStandIn(): Promise<{ url: string; arrived: Arrived[]; close(): Promise<void> }> {
  const arrived: Arrived[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const url = incoming.url ?? '/';
      arrived.push({ method: incoming.method ?? '', url, headers: incoming.headers, body });
      const { pathname } = new URL(url, 'http://localhost');
      const json = (status: number, value: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      if (incoming.method === 'GET' && pathname === '/api/v1/repos/go%20gitea/gitea')
        return json(200, { id: 1, name: 'gitea', full_name: 'go gitea/gitea' });
      if (incoming.method === 'GET' && pathname === '/api/v1/repos/go%20gitea/gitea/pulls')
        return json(200, [{ id: 2, number: 20712, state: 'closed' }]);
      if (incoming.method === 'POST' && pathname === '/api/v1/repos/go%20gitea/gitea/issues') {
        // The created Issue as the document describes it: labels come back as Label objects, not the ids sent.
        const { labels = [], ...created } = JSON.parse(body) as { labels?: number[] };
        return json(201, { id: 3, number: 42, ...created, labels: labels.map((id) => ({ id })) });
      }
      json(404, { message: `no route for ${incoming.method} ${pathname}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The operations the document describes, counted from its own text. */
function operationsInDocument(): number {
  const document = JSON.parse(readFileSync(DOCUMENT, 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.values(document.paths).reduce(
    (count, item) => count + METHODS.filter((method) => method in item).length,
    0,
  );
}

describe("Gitea's API description (Swagger 2.0, 308 operations) through the gateway", () => {
  let stand: Awaited<ReturnType<typeof startGiteaStandIn>>;
  let gateway: RunningGateway;
  const logged = recordingLog();
  let tools: Record<string, any>[] = [];

  before(async () => {
    stand = await startGiteaStandIn();
    const servers = {
      gitea: { openapi: DOCUMENT, baseUrl: `${stand.url}/api/v1`, headers: { Authorization: 'token gitea-test' } },
    };
    gateway = await startGateway(parseConfig({ listen: { port: 0 }, servers }, 'test', ROOT), logged.log);
    const answer = await post(`${gateway.url}/mcp`, request('tools/list'));
    tools = answer.body.result.tools;
  });
  after(async () => {
    await gateway?.close();
    await stand?.close();
  });

  test('one tool per operation, none refused; names unique and within 64 characters', () => {
    assert.equal(operationsInDocument(), 308);
    assert.deepEqual(
      logged.warnings().filter((line) => line.includes('servers.gitea')),
      [],
      'no operation left out',
    );
    assert.equal(tools.length, 308);
    const names = tools.map((tool) => tool.name as string);
    assert.equal(new Set(names).size, names.length);
    for (const name of names) assert.match(name, /^gitea__[A-Za-z0-9_-]{1,57}$/);
    // A multipart/form-data upload is listed without a body argument: the gateway cannot send a file yet.
    const upload = tools.find((tool) => tool.name === 'gitea__repoCreateReleaseAttachment')!;
    assert.deepEqual(Object.keys(upload.inputSchema.properties).sort(), ['id', 'name', 'owner', 'repo']);
  });

  test('every tool is a valid MCP Tool, every schema a JSON Schema 2020-12 ajv compiles with strictSchema', () => {
    // strictSchema: no keyword outside JSON Schema (OpenAPI's and the x- ones are gone). Not strictTypes: Gitea's
    // `type: string, uniqueItems: true` is valid JSON Schema (the keyword has nothing to apply to), only odd.
    const ajv = new Ajv2020({ strict: true, strictTypes: false, validateFormats: false });
    for (const tool of tools) {
      assert.deepEqual(defProblems('Tool', tool), [], tool.name);
      for (const schema of [tool.inputSchema, tool.outputSchema].filter(Boolean)) {
        assert.equal(schema.type, 'object', tool.name);
        assert.equal(ajv.validateSchema(schema), true, `${tool.name}: ${ajv.errorsText()}`);
        assert.doesNotThrow(() => ajv.compile(schema), tool.name);
      }
    }
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = await post(`${gateway.url}/mcp`, request('tools/call', { name: `gitea__${name}`, arguments: args }));
    assert.ok(answer.body.result, JSON.stringify(answer.body));
    assert.notEqual(answer.body.result.isError, true, JSON.stringify(answer.body.result));
    return { result: answer.body.result, arrived: stand.arrived.at(-1)! };
  };

  test('repoGet: the path parameters percent-encoded, the configured Authorization sent', async () => {
    const { result, arrived } = await call('repoGet', { owner: 'go gitea', repo: 'gitea' });
    assert.equal(`${arrived.method} ${arrived.url}`, 'GET /api/v1/repos/go%20gitea/gitea');
    assert.equal(arrived.headers.authorization, 'token gitea-test');
    assert.equal(arrived.headers.accept, 'application/json'); // the operation's own produces
    assert.deepEqual(result.structuredContent, { id: 1, name: 'gitea', full_name: 'go gitea/gitea' });
  });

  test('repoListPullRequests: an enum, a collectionFormat multi array and an integer in the query', async () => {
    const { result, arrived } = await call('repoListPullRequests', {
      owner: 'go gitea',
      repo: 'gitea',
      state: 'closed',
      labels: [3, 5],
      page: 2,
    });
    assert.equal(
      `${arrived.method} ${arrived.url}`,
      'GET /api/v1/repos/go%20gitea/gitea/pulls?state=closed&labels=3&labels=5&page=2',
    );
    // A JSON array answer is wrapped: an outputSchema and its structuredContent are objects.
    assert.deepEqual(result.structuredContent, { result: [{ id: 2, number: 20712, state: 'closed' }] });
  });

  test('issueCreateIssue: the body schema flattened into arguments, sent back as one JSON body', async () => {
    const args = { title: 'A crash', body: 'It crashed.', labels: [1, 2], closed: false };
    const { result, arrived } = await call('issueCreateIssue', { owner: 'go gitea', repo: 'gitea', ...args });
    assert.equal(`${arrived.method} ${arrived.url}`, 'POST /api/v1/repos/go%20gitea/gitea/issues');
    assert.equal(arrived.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(arrived.body), args);
    assert.deepEqual(result.structuredContent, { id: 3, number: 42, ...args, labels: [{ id: 1 }, { id: 2 }] });
  });
});
