// A host's server list pasted into the gateway's config: Claude Desktop, Claude Code, Cursor, VS Code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, type HttpServerConfig, type StdioServerConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

test("Claude Desktop's mcpServers: command, args and env become stdio servers", () => {
  const config = parseConfig(
    {
      mcpServers: {
        files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'], env: { DEBUG: '1' } },
      },
    },
    't',
    BASE,
    {},
  );
  const files = config.servers.files as StdioServerConfig;
  assert.equal(files.transport, 'stdio');
  assert.equal(files.command, 'npx');
  assert.deepEqual(files.args, ['-y', '@modelcontextprotocol/server-filesystem', '/srv']);
  assert.deepEqual(files.env, { DEBUG: '1' });
});

test("Cursor's url/headers form, with ${env:NAME}, becomes a remote server with the variable expanded", () => {
  const config = parseConfig(
    {
      mcpServers: { remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${env:TOKEN}' } } },
    },
    't',
    BASE,
    { TOKEN: 'abc' },
  );
  const remote = config.servers.remote as HttpServerConfig;
  assert.equal(remote.transport, 'http');
  assert.equal(remote.headers.Authorization, 'Bearer abc');
});

test('type: stdio / http / streamable-http (Claude Code, VS Code) decide the transport; both maps mix', () => {
  const config = parseConfig(
    {
      servers: { vscode: { type: 'stdio', command: 'node', args: ['a.js'] }, own: { command: 'node' } },
      mcpServers: {
        code: { type: 'http', url: 'https://a.example/mcp' },
        other: { type: 'streamable-http', url: 'https://b.example/mcp' },
      },
    },
    't',
    BASE,
    {},
  );
  assert.deepEqual(Object.fromEntries(Object.entries(config.servers).map(([name, s]) => [name, s.transport])), {
    vscode: 'stdio',
    own: 'stdio',
    code: 'http',
    other: 'http',
  });
});

test('disabled: true leaves a server out', () => {
  const config = parseConfig(
    { mcpServers: { on: { command: 'node' }, off: { command: 'node', disabled: true } } },
    't',
    BASE,
    {},
  );
  assert.deepEqual(Object.keys(config.servers), ['on']);
});

test('refusals name the mcpServers key the user wrote, and what to do', () => {
  // type: "sse" (the 2024 HTTP+SSE transport) is served since issue 37: transport sse.
  assert.equal(
    parseConfig({ mcpServers: { old: { type: 'sse', url: 'https://a.example/sse' } } }, 't', BASE, {}).servers.old!
      .transport,
    'sse',
  );
  const [unknown] = configProblems({ mcpServers: { a: { command: 'node', autoApprove: ['x'] } } });
  assert.match(
    unknown!,
    /^mcpServers\.a: 'autoApprove' is a host's setting, not the gateway's: tool approval is the host's/,
  );
  const [missing] = configProblems({ mcpServers: { a: { command: 'node', env: { K: '${NOPE}' } } } });
  assert.match(missing!, /^mcpServers\.a\.env\.K: environment variable NOPE is not set/);
  const [twice] = configProblems({ servers: { a: { command: 'node' } }, mcpServers: { a: { command: 'node' } } });
  assert.match(twice!, /^mcpServers\.a: servers\.a exists too; rename one/);
  const [badType] = configProblems({ servers: { a: { type: 'websocket', command: 'node' } } });
  assert.match(badType!, /^servers\.a\.type: must be one of "stdio", "http"/);
});
