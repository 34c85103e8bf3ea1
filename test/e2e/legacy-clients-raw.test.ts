// 2025-era clients downstream (issue #10; shared plumbing in legacy-clients-kit.ts): raw 2025 HTTP:
// initialize and its opaque Mcp-Session-Id, 2025-form answers, progress and elicitation on the POST's stream,
// the GET stream, DELETE, unknown and tampered sessions, batches; and modern requests on the same endpoints
// served as before whatever session headers they carry.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { headersFor, META, post, request, VERSION, textOf } from './harness.js';
import {
  gatewayForThisFile,
  LEGACY_VERSIONS,
  ELICIT_OK,
  CONFIRMED,
  exchange,
  legacyHeaders,
  legacy,
  initializeBody,
  initialize,
  send,
  legacyResult,
  openStream,
  openGetStream,
  tamper,
  assertSessionGone,
} from './legacy-clients-kit.js';

const gateway = gatewayForThisFile();

// ---- raw HTTP ---------------------------------------------------------------------------------------------

describe('raw 2025 HTTP', () => {
  test('initialize negotiates a 2025 version and answers with an opaque Mcp-Session-Id', {
    timeout: 30_000,
  }, async () => {
    for (const endpoint of ['/servers/modern/mcp', '/mcp']) {
      const url = `${gateway.url}${endpoint}`;
      for (const [asked, expected] of [
        ...LEGACY_VERSIONS.map((v) => [v, v]),
        ['2024-11-05', '2025-11-25'],
        ['2099-01-01', '2025-11-25'],
      ] as const) {
        const answer = await exchange(url, 'POST', legacyHeaders(), initializeBody(asked));
        const result = legacyResult(answer);
        assert.equal(result.protocolVersion, expected, `${endpoint} asked ${asked}`);
        assert.equal(typeof result.capabilities, 'object');
        assert.ok(result.capabilities.tools, `${endpoint}: tools among ${JSON.stringify(result.capabilities)}`);
        assert.equal(typeof result.serverInfo?.name, 'string');
        assert.equal(typeof result.serverInfo?.version, 'string');
        assert.equal(answer.body.jsonrpc, '2.0');
        const id = answer.headers.get('mcp-session-id');
        assert.ok(id, `${endpoint}: Mcp-Session-Id header`);
        assert.match(id, /^[\x21-\x7e]+$/, 'visible ASCII only, as the 2025 transport requires');
      }
    }
    // Opaque: encrypted, so nothing of the session reads through, and never the same twice.
    const first = (await initialize(`${gateway.url}/servers/modern/mcp`, '2025-06-18')).session.id;
    const second = (await initialize(`${gateway.url}/servers/modern/mcp`, '2025-06-18')).session.id;
    assert.notEqual(first, second);
    for (const part of first.split(/[.~:_]/)) {
      for (const decoded of [
        part,
        Buffer.from(part, 'base64url').toString('latin1'),
        Buffer.from(part, 'base64').toString('latin1'),
      ]) {
        for (const secret of ['2025-06-18', 'modern', 'raw-2025-client', '/servers/'])
          assert.ok(!decoded.includes(secret), `${secret} readable in the session id ${first}`);
      }
    }
  });

  test('list, call, read and get answer in 2025 form; ping, logging/setLevel, subscribe and unsubscribe are answered', {
    timeout: 30_000,
  }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`, '2025-11-25');
    const tools = legacyResult(await send(session, 'tools/list'));
    assert.ok(
      Array.isArray(tools.tools) && tools.tools.some((t: { name: string }) => t.name === 'echo'),
      JSON.stringify(tools).slice(0, 300),
    );

    const call = legacyResult(await send(session, 'tools/call', { name: 'echo', arguments: { text: 'raw' } }));
    assert.deepEqual(call.content, [{ type: 'text', text: 'raw' }]);

    for (const method of ['prompts/list', 'resources/list', 'resources/templates/list'])
      legacyResult(await send(session, method));
    const read = legacyResult(await send(session, 'resources/read', { uri: 'fixture://hello' }));
    assert.equal(read.contents[0].text, 'hello world');
    const prompt = legacyResult(await send(session, 'prompts/get', { name: 'greet', arguments: { name: 'Ada' } }));
    assert.deepEqual(prompt.messages[0].content, { type: 'text', text: 'Hello, Ada!' });

    const ping = legacyResult(await send(session, 'ping'));
    assert.deepEqual(
      Object.keys(ping).filter((k) => k !== '_meta'),
      [],
      JSON.stringify(ping),
    );
    legacyResult(await send(session, 'logging/setLevel', { level: 'warning' }));
    legacyResult(await send(session, 'resources/subscribe', { uri: 'fixture://hello' }));
    legacyResult(await send(session, 'resources/unsubscribe', { uri: 'fixture://hello' }));

    // The same on the aggregate endpoint, with its public names.
    const { session: aggregate } = await initialize(`${gateway.url}/mcp`, '2025-03-26');
    const all = legacyResult(await send(aggregate, 'tools/list'));
    const names = all.tools.map((t: { name: string }) => t.name);
    for (const name of ['modern__echo', 'mrtr__confirm', 'everything__echo'])
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    assert.deepEqual(
      legacyResult(await send(aggregate, 'tools/call', { name: 'modern__echo', arguments: { text: 'via /mcp' } }))
        .content,
      [{ type: 'text', text: 'via /mcp' }],
    );
    legacyResult(await send(aggregate, 'ping'));
  });

  test("progress reaches a legacy client on the POST's SSE stream, before the result", {
    timeout: 30_000,
  }, async () => {
    for (const [endpoint, name] of [
      ['/servers/modern/mcp', 'progress'],
      ['/mcp', 'modern__progress'],
    ] as const) {
      const { session } = await initialize(`${gateway.url}${endpoint}`);
      const answer = await exchange(
        session.url,
        'POST',
        legacyHeaders(session),
        legacy('tools/call', { name, arguments: { steps: 3 }, _meta: { progressToken: 'tok-1' } }),
      );
      assert.equal(
        answer.headers.get('content-type')?.startsWith('text/event-stream'),
        true,
        answer.text.slice(0, 300),
      );
      const progress = answer.messages.filter((m) => m.method === 'notifications/progress');
      assert.deepEqual(
        progress.map((m) => [m.params.progressToken, m.params.progress]),
        [
          ['tok-1', 1],
          ['tok-1', 2],
          ['tok-1', 3],
        ],
        endpoint,
      );
      assert.equal(answer.messages.at(-1), answer.body, 'the result comes last');
      assert.equal(textOf(legacyResult(answer)), 'progressed 3');
    }
  });

  test("elicitation round trip: elicitation/create on the POST's stream, the answer POSTed back feeds the retry", {
    timeout: 30_000,
  }, async () => {
    for (const [endpoint, name] of [
      ['/servers/mrtr/mcp', 'confirm'],
      ['/mcp', 'mrtr__confirm'],
    ] as const) {
      const { session } = await initialize(`${gateway.url}${endpoint}`, '2025-11-25', { elicitation: {} });
      const callId = `call-${endpoint}`;
      const stream = await openStream(
        session.url,
        'POST',
        legacyHeaders(session),
        legacy('tools/call', { name, arguments: { env: 'prod' } }, callId),
      );
      try {
        assert.equal(stream.status, 200);
        assert.equal(
          stream.headers.get('content-type')?.startsWith('text/event-stream'),
          true,
          `${endpoint}: an SSE answer`,
        );
        const ask = await stream.next(
          (m) => m.method === 'elicitation/create',
          10_000,
          `${endpoint}: elicitation/create`,
        );
        assert.ok(ask.id !== undefined && ask.id !== null, 'a request, with an id');
        assert.notEqual(ask.id, callId);
        assert.equal(ask.params.message, 'Deploy to prod?');
        assert.deepEqual(ask.params.requestedSchema.required, ['ok']);
        assert.ok(!stream.messages.some((m) => m.id === callId), 'no result before the answer');

        const answered = await exchange(session.url, 'POST', legacyHeaders(session), {
          jsonrpc: '2.0',
          id: ask.id,
          result: ELICIT_OK,
        });
        assert.equal(answered.status, 202, answered.text);

        const final = await stream.next((m) => m.id === callId, 10_000, `${endpoint}: the call's result`);
        const result = legacyResult({
          status: 200,
          headers: stream.headers,
          body: final,
          messages: [final],
          text: JSON.stringify(final),
        });
        assert.equal(textOf(result), CONFIRMED);
        assert.ok(!('inputRequests' in result) && !('requestState' in result), JSON.stringify(result));
      } finally {
        stream.close();
      }
    }
  });

  test('the GET stream carries list_changed and resource updates', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`, '2025-11-25');
    const get = await openGetStream(session);
    try {
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('content-type')?.startsWith('text/event-stream'), true);
      legacyResult(await send(session, 'resources/subscribe', { uri: 'fixture://hello' }));

      // The upstream subscription may take a moment to be in place: touch until the update arrives.
      const deadline = Date.now() + 10_000;
      while (!get.messages.some((m) => m.method === 'notifications/resources/updated') && Date.now() < deadline) {
        legacyResult(await send(session, 'tools/call', { name: 'touch', arguments: { uri: 'fixture://hello' } }));
        await sleep(200);
      }
      const updated = await get.next(
        (m) => m.method === 'notifications/resources/updated',
        0,
        'notifications/resources/updated',
      );
      assert.equal(updated.params.uri, 'fixture://hello');
      assert.ok(!('id' in updated), 'a notification');

      legacyResult(await send(session, 'tools/call', { name: 'add-tool', arguments: {} }));
      await get.next(
        (m) => m.method === 'notifications/tools/list_changed',
        10_000,
        'notifications/tools/list_changed',
      );
      const tools = legacyResult(await send(session, 'tools/list'));
      assert.ok(
        tools.tools.some((t: { name: string }) => t.name.startsWith('added-')),
        'the new list has the added tool',
      );
    } finally {
      get.close();
    }
  });

  test('DELETE ends the session: then 404 for POST, GET and DELETE', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`);
    legacyResult(await send(session, 'tools/list'));
    const del = await exchange(session.url, 'DELETE', {
      'mcp-session-id': session.id,
      'mcp-protocol-version': session.version,
    });
    assert.ok(del.status >= 200 && del.status < 300, `DELETE → ${del.status} ${del.text}`);
    await assertSessionGone(session, 'after DELETE');
    const again = await exchange(session.url, 'DELETE', {
      'mcp-session-id': session.id,
      'mcp-protocol-version': session.version,
    });
    assert.equal(again.status, 404);
    // A new initialize opens a new session.
    const fresh = await initialize(session.url);
    legacyResult(await send(fresh.session, 'ping'));
  });

  test('an unknown or tampered session id → 404', { timeout: 30_000 }, async () => {
    const { session } = await initialize(`${gateway.url}/servers/modern/mcp`);
    legacyResult(await send(session, 'ping'));
    const tampered = { ...session, id: tamper(session.id) };
    assert.notEqual(tampered.id, session.id);
    await assertSessionGone(tampered, 'tampered');
    await assertSessionGone({ ...session, id: session.id.slice(0, -4) }, 'truncated');
    await assertSessionGone({ ...session, id: 'not-a-session' }, 'unknown');
    await assertSessionGone({ ...session, id: `${session.id}AAAA` }, 'extended');
    // The genuine one still works.
    legacyResult(await send(session, 'ping'));
  });

  test('a batch → -32600, legacy or mixed', { timeout: 30_000 }, async () => {
    const url = `${gateway.url}/servers/modern/mcp`;
    const plain = await exchange(url, 'POST', legacyHeaders(), [initializeBody('2025-06-18')]);
    assert.equal(plain.body?.error?.code, -32600, plain.text);
    assert.equal(plain.headers.get('mcp-session-id'), null);
    const { session } = await initialize(url);
    const mixed = await exchange(url, 'POST', legacyHeaders(session), [legacy('ping'), request('tools/list')]);
    assert.equal(mixed.body?.error?.code, -32600, mixed.text);
    const legacyOnly = await exchange(url, 'POST', legacyHeaders(session), [legacy('ping'), legacy('tools/list')]);
    assert.equal(legacyOnly.body?.error?.code, -32600, legacyOnly.text);
  });
});

// ---- modern requests on the same endpoints -------------------------------------------------------------

describe('modern requests are served as before, whatever session headers they carry', () => {
  test('tools/list and tools/call with a live, an ended or a made-up Mcp-Session-Id', { timeout: 30_000 }, async () => {
    const url = `${gateway.url}/servers/modern/mcp`;
    const { session: live } = await initialize(url);
    const { session: ended } = await initialize(url);
    await exchange(url, 'DELETE', { 'mcp-session-id': ended.id, 'mcp-protocol-version': ended.version });
    for (const sessionId of [undefined, live.id, ended.id, 'not-a-session']) {
      const extra: Record<string, string> = sessionId ? { 'mcp-session-id': sessionId } : {};
      const list = request('tools/list');
      const listed = await post(url, list, { ...headersFor(list), ...extra });
      assert.equal(listed.status, 200, `${sessionId}: ${JSON.stringify(listed.body).slice(0, 300)}`);
      assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === 'echo'));
      assert.equal(listed.headers.get('mcp-session-id'), null);

      const call = request('tools/call', { name: 'echo', arguments: { text: 'modern' } });
      const called = await post(url, call, { ...headersFor(call), ...extra });
      assert.equal(called.status, 200, `${sessionId}: ${JSON.stringify(called.body).slice(0, 300)}`);
      assert.equal(called.body.result.resultType, 'complete');
      assert.deepEqual(called.body.result.content, [{ type: 'text', text: 'modern' }]);
      assert.equal(called.headers.get('mcp-session-id'), null);
    }
    // The legacy session is untouched by modern traffic that carried it.
    legacyResult(await send(live, 'ping'));
  });

  test('server/discover on /mcp stays modern; an initialize carrying modern _meta is refused as before', {
    timeout: 30_000,
  }, async () => {
    const url = `${gateway.url}/mcp`;
    const discover = request('server/discover');
    const discovered = await post(url, discover);
    assert.equal(discovered.status, 200);
    assert.ok(discovered.body.result.supportedVersions.includes(VERSION));
    assert.equal(discovered.headers.get('mcp-session-id'), null);

    const init = {
      jsonrpc: '2.0',
      id: 'modern-init',
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'confused', version: '1' },
        _meta: META,
      },
    };
    const refused = await post(url, init, headersFor(init));
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, -32601);
    assert.equal(refused.headers.get('mcp-session-id'), null);
  });
});
