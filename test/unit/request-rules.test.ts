import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { checkMessage, type Checked } from '../../src/edge/request-rules.js';
import { ToolHeaderIndex } from '../../src/edge/param-headers.js';
import { MODERN_REQUEST_METHODS, NAME_PARAM } from '../../protocol/mcp.js';
import type { Rejection } from '../../src/edge/rejection.js';
import { officialExamples } from '../schema.js';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const VERSION = '2026-07-28';

const meta = () => ({ [PV]: VERSION, [CC]: {}, 'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' } });
function req(method: string, params: Record<string, unknown> = {}, id: string | number = 1) {
  return { jsonrpc: '2.0', id, method, params: { _meta: meta(), ...params } };
}
function hdrs(method: string, extra: Record<string, string> = {}) {
  return new Headers({ 'MCP-Protocol-Version': VERSION, 'Mcp-Method': method, ...extra });
}
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;

function rejected(result: Checked, status: number, code: number): Rejection {
  assert.equal(result.kind, 'rejected', `expected a rejection, got ${JSON.stringify(result)}`);
  const { rejection } = result as Extract<Checked, { kind: 'rejected' }>;
  assert.equal(rejection.status, status, JSON.stringify(rejection.body));
  assert.equal(rejection.body.error.code, code, JSON.stringify(rejection.body));
  assert.equal(rejection.body.jsonrpc, '2.0');
  return rejection;
}
function accepted(result: Checked): void {
  assert.equal(result.kind, 'request', `expected acceptance, got ${JSON.stringify(result)}`);
}

describe('JSON-RPC envelope', () => {
  test('a batch array → 400 / -32600 with no id', () => {
    const r = rejected(checkMessage([req('tools/list')], hdrs('tools/list'), undefined), 400, -32600);
    assert.equal(r.body.id ?? null, null); // no id: absent or null
    assert.match(r.body.error.message, /[Bb]atch/);
  });

  test('a non-object body → 400 / -32600', () => {
    for (const body of ['tools/list', 42, null, true]) {
      rejected(checkMessage(body, new Headers(), undefined), 400, -32600);
    }
  });

  test('jsonrpc missing or wrong → 400 / -32600, echoing a valid id', () => {
    const { jsonrpc: _drop, ...noVersion } = req('tools/list', {}, 'abc');
    assert.equal(rejected(checkMessage(noVersion, hdrs('tools/list'), undefined), 400, -32600).body.id, 'abc');
    rejected(checkMessage({ ...req('tools/list'), jsonrpc: '1.0' }, hdrs('tools/list'), undefined), 400, -32600);
  });

  test('a response object sent by the client → 400 / -32600', () => {
    const r = rejected(checkMessage({ jsonrpc: '2.0', id: 5, result: {} }, new Headers(), undefined), 400, -32600);
    assert.equal(r.body.id, 5);
    assert.match(r.body.error.message, /respons/);
    rejected(
      checkMessage({ jsonrpc: '2.0', id: 5, error: { code: 1, message: 'x' } }, new Headers(), undefined),
      400,
      -32600,
    );
  });

  test('params that are not an object → 400 / -32600', () => {
    for (const params of [[1, 2], 'x', 3, null]) {
      rejected(
        checkMessage({ jsonrpc: '2.0', id: 1, method: 'tools/list', params }, hdrs('tools/list'), undefined),
        400,
        -32600,
      );
    }
  });

  test('id null → 400 / -32600', () => {
    const r = rejected(checkMessage({ ...req('tools/list'), id: null }, hdrs('tools/list'), undefined), 400, -32600);
    assert.equal(r.body.id ?? null, null); // no id: absent or null
  });

  test('a fractional or object id → 400 / -32600', () => {
    rejected(checkMessage({ ...req('tools/list'), id: 1.5 }, hdrs('tools/list'), undefined), 400, -32600);
    rejected(checkMessage({ ...req('tools/list'), id: { a: 1 } }, hdrs('tools/list'), undefined), 400, -32600);
  });

  test('a notification (no id) → kind notification, message untouched', () => {
    const body = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    const result = checkMessage(body, new Headers(), undefined);
    assert.equal(result.kind, 'notification');
    assert.equal((result as Extract<Checked, { kind: 'notification' }>).message, body);
  });
});

describe('per-request _meta', () => {
  test('missing _meta → 400 / -32602', () => {
    const r = rejected(
      checkMessage({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }, hdrs('tools/list'), undefined),
      400,
      -32602,
    );
    assert.equal(r.body.id, 7);
    rejected(checkMessage({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, hdrs('tools/list'), undefined), 400, -32602);
  });

  test('_meta without the protocol version → 400 / -32602', () => {
    const body = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: { [CC]: {} } } };
    rejected(checkMessage(body, hdrs('tools/list'), undefined), 400, -32602);
  });

  test('initialize without _meta → 400 / -32022 with data.supported and data.requested', () => {
    const body = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    };
    const r = rejected(checkMessage(body, new Headers(), undefined), 400, -32022);
    assert.equal(r.body.id, 0);
    assert.deepEqual(r.body.error.data, { supported: [VERSION], requested: '2025-06-18' });
  });

  test('initialize without protocolVersion → requested "unknown"', () => {
    const r = rejected(
      checkMessage({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }, new Headers(), undefined),
      400,
      -32022,
    );
    assert.deepEqual(r.body.error.data, { supported: [VERSION], requested: 'unknown' });
  });

  test('an unsupported version in _meta → 400 / -32022 with {supported, requested}', () => {
    const body = req('tools/list');
    body.params._meta[PV] = '2025-11-25';
    const r = rejected(
      checkMessage(body, new Headers({ 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'tools/list' }), undefined),
      400,
      -32022,
    );
    assert.deepEqual(r.body.error.data, { supported: [VERSION], requested: '2025-11-25' });
  });

  test(
    'a non-string version is judged like any unsupported one: ' + 'a header that disagrees → -32020 first, else -32022',
    () => {
      const body = req('tools/list');
      (body.params._meta as Record<string, unknown>)[PV] = 20260728;
      // The spec: a header that does not match the body's version is a HeaderMismatch, whatever the version.
      rejected(checkMessage(body, hdrs('tools/list'), undefined), 400, -32020);
      const repeated = rejected(
        checkMessage(body, new Headers({ 'MCP-Protocol-Version': '20260728', 'Mcp-Method': 'tools/list' }), undefined),
        400,
        -32022,
      );
      assert.deepEqual(repeated.body.error.data, { supported: [VERSION], requested: '20260728' });
      const bare = rejected(checkMessage(body, new Headers(), undefined), 400, -32022);
      assert.deepEqual(bare.body.error.data, { supported: [VERSION], requested: '20260728' });
    },
  );

  test('missing clientCapabilities → 400 / -32602', () => {
    const body = req('tools/list');
    delete (body.params._meta as Record<string, unknown>)[CC];
    const r = rejected(checkMessage(body, hdrs('tools/list'), undefined), 400, -32602);
    assert.match(r.body.error.message, /clientCapabilities/);
  });

  test('clientCapabilities that are not an object → 400 / -32602', () => {
    const body = req('tools/list');
    (body.params._meta as Record<string, unknown>)[CC] = true;
    rejected(checkMessage(body, hdrs('tools/list'), undefined), 400, -32602);
  });
});

describe('standard headers', () => {
  test('MCP-Protocol-Version header missing → 400 / -32020', () => {
    const r = rejected(
      checkMessage(req('tools/list'), new Headers({ 'Mcp-Method': 'tools/list' }), undefined),
      400,
      -32020,
    );
    assert.match(r.body.error.message, /MCP-Protocol-Version/);
  });

  test('MCP-Protocol-Version header different from _meta → 400 / -32020', () => {
    rejected(
      checkMessage(
        req('tools/list'),
        new Headers({ 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'tools/list' }),
        undefined,
      ),
      400,
      -32020,
    );
  });

  test('Mcp-Method missing → 400 / -32020', () => {
    const r = rejected(
      checkMessage(req('tools/list'), new Headers({ 'MCP-Protocol-Version': VERSION }), undefined),
      400,
      -32020,
    );
    assert.match(r.body.error.message, /Mcp-Method/);
  });

  test('Mcp-Method different from the body (values are case-sensitive) → 400 / -32020', () => {
    rejected(checkMessage(req('tools/list'), hdrs('prompts/list'), undefined), 400, -32020);
    rejected(checkMessage(req('tools/list'), hdrs('Tools/List'), undefined), 400, -32020);
  });

  test('header names are case-insensitive', () => {
    accepted(
      checkMessage(
        req('tools/list'),
        new Headers({ 'mcp-protocol-version': VERSION, 'MCP-METHOD': 'tools/list' }),
        undefined,
      ),
    );
  });

  test('removed methods sent with modern _meta → 404 / -32601', () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']) {
      const r = rejected(
        checkMessage(
          req(method, method === 'resources/subscribe' ? { uri: 'file:///a' } : {}),
          hdrs(method),
          undefined,
        ),
        404,
        -32601,
      );
      assert.match(r.body.error.message, /removed/, method);
    }
  });

  test('an unknown method → 404 / -32601', () => {
    const r = rejected(
      checkMessage(req('tools/frobnicate', {}, 'x'), hdrs('tools/frobnicate'), undefined),
      404,
      -32601,
    );
    assert.equal(r.body.id, 'x');
    assert.match(r.body.error.message, /tools\/frobnicate/);
  });

  for (const [method, param, value] of [
    ['tools/call', 'name', 'get_weather'],
    ['prompts/get', 'name', 'code_review'],
    ['resources/read', 'uri', 'file:///project/src/main.rs'],
  ] as const) {
    test(`${method}: Mcp-Name equal to params.${param} → accepted`, () => {
      accepted(checkMessage(req(method, { [param]: value }), hdrs(method, { 'Mcp-Name': value }), undefined));
    });
    test(`${method}: Mcp-Name missing → 400 / -32020`, () => {
      const r = rejected(checkMessage(req(method, { [param]: value }), hdrs(method), undefined), 400, -32020);
      assert.match(r.body.error.message, /Mcp-Name/);
    });
    test(`${method}: Mcp-Name mismatch → 400 / -32020`, () => {
      rejected(
        checkMessage(req(method, { [param]: value }), hdrs(method, { 'Mcp-Name': value + 'x' }), undefined),
        400,
        -32020,
      );
    });
  }

  test('resources/read: Mcp-Name carrying params.name instead of params.uri → -32020', () => {
    rejected(
      checkMessage(
        req('resources/read', { uri: 'file:///a', name: 'a' }),
        hdrs('resources/read', { 'Mcp-Name': 'a' }),
        undefined,
      ),
      400,
      -32020,
    );
  });

  test('a base64-encoded Mcp-Name matching a non-ASCII tool name → accepted', () => {
    accepted(
      checkMessage(
        req('tools/call', { name: '天気', arguments: {} }),
        hdrs('tools/call', { 'Mcp-Name': b64('天気') }),
        undefined,
      ),
    );
  });

  test('a base64-encoded Mcp-Name of another name → -32020', () => {
    rejected(
      checkMessage(req('tools/call', { name: '天気' }), hdrs('tools/call', { 'Mcp-Name': b64('天氣') }), undefined),
      400,
      -32020,
    );
  });

  test('a raw non-ASCII Mcp-Name → -32020', () => {
    // On the wire the UTF-8 bytes arrive as Latin-1 characters; 'café' is the simplest such value.
    rejected(
      checkMessage(req('tools/call', { name: 'café' }), hdrs('tools/call', { 'Mcp-Name': 'café' }), undefined),
      400,
      -32020,
    );
  });

  test('an Mcp-Param-* header the gateway does not recognise is forwarded unchecked, even malformed', () => {
    // The spec: intermediaries that do not recognise a Mcp-Param header MUST forward it and otherwise ignore it.
    accepted(
      checkMessage(
        req('tools/call', { name: 'get_weather', arguments: { city: 'café' } }),
        hdrs('tools/call', { 'Mcp-Name': 'get_weather', 'Mcp-Param-City': 'café' }),
        undefined,
      ),
    );
  });

  test('a well-formed Mcp-Param-* header of an unknown tool is forwarded unchecked', () => {
    accepted(
      checkMessage(
        req('tools/call', { name: 'get_weather' }),
        hdrs('tools/call', { 'Mcp-Name': 'get_weather', 'Mcp-Param-X': 'anything' }),
        new ToolHeaderIndex(),
      ),
    );
  });

  describe('with a learned x-mcp-header declaration', () => {
    const index = new ToolHeaderIndex();
    index.learn({
      tools: [
        {
          name: 'execute_sql',
          inputSchema: {
            type: 'object',
            properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } },
          },
        },
      ],
    });
    const call = (region: string) =>
      req('tools/call', { name: 'execute_sql', arguments: { region, query: 'select 1' } });

    test('matching Mcp-Param-Region → accepted', () => {
      accepted(
        checkMessage(
          call('us-west1'),
          hdrs('tools/call', { 'Mcp-Name': 'execute_sql', 'Mcp-Param-Region': 'us-west1' }),
          index,
        ),
      );
    });
    test('missing Mcp-Param-Region → 400 / -32020', () => {
      rejected(checkMessage(call('us-west1'), hdrs('tools/call', { 'Mcp-Name': 'execute_sql' }), index), 400, -32020);
    });
    test('mismatched Mcp-Param-Region → 400 / -32020', () => {
      rejected(
        checkMessage(
          call('us-west1'),
          hdrs('tools/call', { 'Mcp-Name': 'execute_sql', 'Mcp-Param-Region': 'eu-west1' }),
          index,
        ),
        400,
        -32020,
      );
    });
    test('a recognised Mcp-Param-Region with a raw non-ASCII value → -32020 naming the header', () => {
      const r = rejected(
        checkMessage(
          call('café'),
          hdrs('tools/call', { 'Mcp-Name': 'execute_sql', 'Mcp-Param-Region': 'café' }),
          index,
        ),
        400,
        -32020,
      );
      assert.match(r.body.error.message, /mcp-param-region/i);
    });
    test('a recognised Mcp-Param-Region with a control character → -32020', () => {
      rejected(
        checkMessage(
          call('a\x01b'),
          hdrs('tools/call', { 'Mcp-Name': 'execute_sql', 'Mcp-Param-Region': 'a\x01b' }),
          index,
        ),
        400,
        -32020,
      );
    });
    test('base64 Mcp-Param-Region for a non-ASCII value → accepted', () => {
      accepted(
        checkMessage(
          call('Zürich'),
          hdrs('tools/call', { 'Mcp-Name': 'execute_sql', 'Mcp-Param-Region': b64('Zürich') }),
          index,
        ),
      );
    });
  });

  test('a valid full request → kind request with the very body object', () => {
    const body = req('tools/call', { name: 'get_weather', arguments: { location: 'New York' } }, 'r-1');
    const result = checkMessage(body, hdrs('tools/call', { 'Mcp-Name': 'get_weather' }), undefined);
    accepted(result);
    assert.equal((result as Extract<Checked, { kind: 'request' }>).message, body);
  });
});

describe('official examples', () => {
  const files = officialExamples((type) => type.endsWith('Request')).map(({ type, file, body }) => ({
    dir: type,
    file,
    body,
  }));

  test('the examples directory was found and has request examples', () => {
    assert.ok(files.length >= 10, `found ${files.length}`);
    const methods = new Set(files.map((f) => f.body.method));
    for (const m of [
      'tools/call',
      'server/discover',
      'tools/list',
      'prompts/get',
      'resources/read',
      'completion/complete',
      'subscriptions/listen',
    ]) {
      assert.ok(methods.has(m), m);
    }
  });

  function headersFor(body: Record<string, any>, drop?: string): Headers {
    const h: Record<string, string> = {
      'MCP-Protocol-Version': body.params._meta[PV],
      'Mcp-Method': body.method,
    };
    const nameParam = NAME_PARAM[body.method];
    if (nameParam) h['Mcp-Name'] = body.params[nameParam];
    if (drop) delete h[drop];
    return new Headers(h);
  }

  const clientToServer = files.filter((f) => MODERN_REQUEST_METHODS.has(f.body.method));
  const serverToClient = files.filter((f) => !MODERN_REQUEST_METHODS.has(f.body.method));

  for (const { dir, file, body } of clientToServer) {
    test(`${dir}/${file} (${body.method}) is accepted with headers built from its body`, () => {
      const result = checkMessage(structuredClone(body), headersFor(body), undefined);
      accepted(result);
    });
    test(`${dir}/${file} without Mcp-Method → 400 / -32020`, () => {
      const r = rejected(checkMessage(structuredClone(body), headersFor(body, 'Mcp-Method'), undefined), 400, -32020);
      assert.equal(r.body.id, body.id);
    });
    if (NAME_PARAM[body.method]) {
      test(`${dir}/${file} without Mcp-Name → 400 / -32020`, () => {
        rejected(checkMessage(structuredClone(body), headersFor(body, 'Mcp-Name'), undefined), 400, -32020);
      });
    }
  }

  test('server→client examples exist (ElicitRequest, CreateMessageRequest, ListRootsRequest)', () => {
    assert.deepEqual(serverToClient.map((f) => f.body.method).sort(), [
      'elicitation/create',
      'roots/list',
      'sampling/createMessage',
    ]);
  });

  for (const { dir, file, body } of serverToClient) {
    // As shipped these examples carry no "jsonrpc" member (two have no id either): the envelope check refuses them
    // first.
    test(`${dir}/${file} as shipped (no "jsonrpc") → 400 / -32600`, () => {
      rejected(
        checkMessage(
          structuredClone(body),
          new Headers({ 'MCP-Protocol-Version': VERSION, 'Mcp-Method': body.method }),
          undefined,
        ),
        400,
        -32600,
      );
    });
    // Completed into a modern client request, the method is still not one a client may call.
    test(`${dir}/${file} (${body.method}) as a complete modern request → 404 / -32601`, () => {
      const full = {
        jsonrpc: '2.0',
        id: body.id ?? 'x',
        method: body.method,
        params: { ...(body.params ?? {}), _meta: meta() },
      };
      rejected(checkMessage(full, hdrs(body.method), undefined), 404, -32601);
    });
  }
});
