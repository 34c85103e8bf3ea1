// The official SDK v2 client, pinned to 2026-07-28, through the gateway onto a modern SDK v2 stdio
// server and onto the legacy reference server-everything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../../src/gateway.js';
import { everything, fixture, modernClient, startTestGateway } from './harness.js';

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway({ modern: fixture('modern-server'), everything });
});
after(() => gateway.close());

describe('SDK v2 client → gateway → modern SDK v2 stdio server', () => {
  let client: Client;
  before(async () => {
    client = await modernClient(gateway, 'modern');
  });
  after(() => client.close());

  test('discover reports the server and the modern version', async () => {
    const discover = await client.discover();
    assert.deepEqual(discover.supportedVersions, ['2026-07-28']);
    assert.ok(discover.capabilities.tools);
    assert.equal(gateway.upstreams.get('modern')!.status().era, 'modern');
  });

  test('tools/list and tools/call', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'add-tool',
      'crash',
      'echo',
      'noise',
      'pid',
      'progress',
      'region',
      'slow',
      'touch',
    ]);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'héllo, 世界' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'héllo, 世界' }]);
  });

  test('prompts/get and resources/read', async () => {
    const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    assert.deepEqual(prompt.messages[0]!.content, { type: 'text', text: 'Hello, Ada!' });
    const resource = await client.readResource({ uri: 'fixture://hello' });
    assert.equal((resource.contents[0] as { text: string }).text, 'hello world');
  });

  test('progress notifications arrive before the result', async () => {
    const seen: number[] = [];
    const result = await client.callTool(
      { name: 'progress', arguments: { steps: 4 } },
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.deepEqual(result.content, [{ type: 'text', text: 'progressed 4' }]);
  });

  test('a tool whose argument is mirrored into Mcp-Param-Region works through the gateway', async () => {
    await client.listTools();
    const result = await client.callTool({ name: 'region', arguments: { region: 'Zürich' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'region Zürich' }]);
  });

  test('an unknown tool is an ordinary error', async () => {
    await assert.rejects(
      client.callTool({ name: 'nope', arguments: {} }),
      (error: { code?: number }) => error.code === -32602,
    );
  });
});

describe('SDK v2 client → gateway → legacy server-everything', () => {
  let client: Client;
  before(async () => {
    client = await modernClient(gateway, 'everything');
  });
  after(() => client.close());

  test('discover is built from what the server said at initialize', async () => {
    const discover = await client.discover();
    assert.deepEqual(discover.supportedVersions, ['2026-07-28']);
    assert.ok(discover.capabilities.tools);
    const serverInfo = (discover._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo'];
    assert.equal(serverInfo?.name, 'mcp-servers/everything');
    assert.equal(gateway.upstreams.get('everything')!.status().era, 'legacy');
  });

  test('tools/list and tools/call', async () => {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'));
    const result = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: hi' }]);
  });

  test('prompts/get and resources/read', async () => {
    const { prompts } = await client.listPrompts();
    const simple = prompts.find((p) => p.arguments === undefined || p.arguments.length === 0)!;
    const prompt = await client.getPrompt({ name: simple.name });
    assert.ok(prompt.messages.length > 0);
    const { resources } = await client.listResources();
    const resource = await client.readResource({ uri: resources[0]!.uri });
    assert.equal(resource.contents[0]!.uri, resources[0]!.uri);
  });

  test('progress from a legacy tool arrives over SSE', async () => {
    const { tools } = await client.listTools();
    const longRunning = tools.find((t) => t.name.includes('long-running') || t.name.includes('longRunning'));
    assert.ok(
      longRunning,
      `server-everything has a long-running operation tool among ${tools.map((t) => t.name).join(', ')}`,
    );
    const seen: number[] = [];
    await client.callTool(
      { name: longRunning.name, arguments: { duration: 1, steps: 3 } },
      { onprogress: (p) => seen.push(p.progress) },
    );
    assert.equal(seen.length, 3);
  });
});
