// Profiles: curated views over /mcp at /profiles/<name>/mcp — globs choose, renames and describes change
// what is shown, calls by a public name reach the /mcp tool through the same route → judge → execute, a
// policy still decides on top, a name the profile does not show answers as an unknown one, pages walk
// every item once, listen and MRTR work, and a reload adds or removes a profile.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, openListen, post, request, ROOT, schemaProblems, until, type Answer } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';
import { compiledFixture } from '../compiled-fixtures.js';

const mrtr = {
  command: process.execPath,
  args: [compiledFixture('mrtr-server')],
  cwd: ROOT,
  probeTimeoutMs: 30_000,
};
const synthetic = {
  command: process.execPath,
  args: ['test/fixtures/synthetic-server.mjs'],
  cwd: ROOT,
  env: { SERVER_ID: 'syn', TOOL_COUNT: '9', PAGE_SIZE: '3' },
};

const CODING = {
  tools: ['modern__e*', 'modern__pid', 'modern__add-tool', 'mrtr__*'],
  rename: { modern__echo: 'say', modern__pid: 'process_id', mrtr__confirm: 'confirm_deploy' },
  describe: { say: 'Say the text back, unchanged.' },
};

/** Asserts two answers differ only in the name each repeats (status, and the body with the name blanked). */
function assertSameBut(a: Answer, aName: string, b: Answer, bName: string): void {
  assert.equal(a.status, b.status);
  assert.ok('error' in a.body, JSON.stringify(a.body));
  assert.equal(JSON.stringify(a.body).split(aName).join('<name>'), JSON.stringify(b.body).split(bName).join('<name>'));
}

const names = (answer: Answer): string[] => answer.body.result.tools.map((t: { name: string }) => t.name);

describe('a profile under a policy', () => {
  let gateway: RunningGateway;
  let coding: string;
  before(async () => {
    gateway = await startReadyGateway(
      { modern: fixture('modern-server'), mrtr },
      {},
      {
        auth: { anonymous: true },
        // modern__pid is denied: the profile shows it renamed, and still nobody may see or call it.
        policies: [
          {
            name: 'everyone',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['modern', 'mrtr'] },
            deny: { tools: ['modern__pid'] },
          },
        ],
        profiles: { coding: CODING },
      },
    );
    coding = `${gateway.url}/profiles/coding/mcp`;
  });
  after(() => gateway?.close());

  test('tools/list shows what the globs match, renamed and re-described, minus what policy denies', async () => {
    const answer = await post(coding, request('tools/list'));
    assert.equal(answer.status, 200);
    assert.deepEqual(schemaProblems('tools/list', answer.body), []);
    assert.deepEqual(names(answer).sort(), ['confirm_deploy', 'modern__add-tool', 'mrtr__first-rounds', 'say']);
    const say = answer.body.result.tools.find((t: { name: string }) => t.name === 'say');
    assert.equal(say.description, 'Say the text back, unchanged.');
    assert.deepEqual(Object.keys(say.inputSchema.properties), ['text'], 'the definition is otherwise the upstream one');
    const mcp = await post(`${gateway.url}/mcp`, request('tools/list'));
    assert.equal(
      mcp.body.result.tools.find((t: { name: string }) => t.name === 'modern__echo').description,
      'Echo text back',
      '/mcp is unchanged',
    );
  });

  test('a call by the public name reaches the /mcp tool', async () => {
    const answer = await post(coding, request('tools/call', { name: 'say', arguments: { text: 'héllo' } }));
    assert.deepEqual(answer.body.result.content, [{ type: 'text', text: 'héllo' }]);
  });

  test(
    'a name outside the profile, ' + 'a renamed-away name and a denied one all answer as an unknown name on /mcp does',
    async () => {
      const unknownOnMcp = await post(
        `${gateway.url}/mcp`,
        request('tools/call', { name: 'modern__nosuch', arguments: {} }, 7),
      );
      assert.deepEqual(unknownOnMcp.body, {
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32602, message: 'Unknown tool: modern__nosuch' },
      });
      for (const name of ['modern__slow', 'modern__echo', 'process_id', 'nosuch']) {
        const answer = await post(coding, request('tools/call', { name, arguments: {} }, 7));
        assertSameBut(answer, name, unknownOnMcp, 'modern__nosuch');
      }
    },
  );

  test(
    'MRTR through a renamed tool: ' + 'input_required as the server sent it, and the retry resumes the call',
    async () => {
      const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      const first = request('tools/call', { name: 'confirm_deploy', arguments: { env: 'prod' }, _meta: caps });
      const asked = await post(coding, first);
      assert.equal(asked.body.result.resultType, 'input_required', JSON.stringify(asked.body));
      const direct = await post(`${gateway.url}/mcp`, { ...first, params: { ...first.params, name: 'mrtr__confirm' } });
      assert.deepEqual(asked.body, direct.body, 'the same answer as a direct call on /mcp');
      const retry = {
        ...first,
        id: 'retry',
        params: {
          ...first.params,
          requestState: asked.body.result.requestState,
          inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
        },
      };
      const done = await post(coding, retry);
      assert.match(done.body.result.content[0].text, /^answer=\{"ok":true\} stateIntact=true$/);
    },
  );

  test('listen on a profile hears of list changes', async () => {
    const listen = await openListen(coding, { toolsListChanged: true });
    try {
      await post(coding, request('tools/call', { name: 'modern__add-tool', arguments: {} }));
      assert.ok(await until(() => listen.messages.some((m) => m.method === 'notifications/tools/list_changed'), 5_000));
    } finally {
      listen.close();
    }
  });

  test('an unknown profile is a 404 that names it, like an unknown server', async () => {
    const answer = await post(`${gateway.url}/profiles/nosuch/mcp`, request('tools/list'));
    assert.equal(answer.status, 404);
    assert.match(
      answer.body.error.message,
      new RegExp(
        String.raw`^No profile named 'nosuch'\. Endpoints: \/mcp, \/servers\/modern\/mcp, \/servers\/mrtr\/mcp, ` +
          String.raw`\/search\/mcp, \/profiles\/coding\/mcp$`,
      ),
    );
  });
});

describe('a profile without policies: paging and reload', () => {
  let gateway: RunningGateway;
  const config = (profiles: Record<string, unknown>) =>
    parseConfig(
      { listen: { port: 0 }, servers: { modern: fixture('modern-server'), syn: synthetic }, profiles },
      'test',
      ROOT,
    );
  const PAGED = { late: { tools: ['syn__tool-4', 'syn__tool-7', 'syn__tool-8'] }, early: { tools: ['syn__tool-1'] } };
  before(async () => {
    gateway = await startReadyGateway({ modern: fixture('modern-server'), syn: synthetic }, {}, { profiles: PAGED });
  });
  after(() => gateway?.close());

  /** Every page a client walking nextCursor gets. */
  async function walk(url: string): Promise<Answer[]> {
    const pages: Answer[] = [];
    let cursor: string | undefined;
    do {
      const page = await post(url, request('tools/list', cursor === undefined ? {} : { cursor }));
      assert.equal(page.status, 200, JSON.stringify(page.body));
      pages.push(page);
      cursor = page.body.result.nextCursor;
    } while (cursor !== undefined && pages.length < 20);
    return pages;
  }

  test('walking nextCursor gets every tool exactly once, and pages the profile leaves empty are skipped', async () => {
    const mcpPages = await walk(`${gateway.url}/mcp`);
    assert.equal(mcpPages.length, 3, 'the synthetic server pages its tools by 3');
    const late = await walk(`${gateway.url}/profiles/late/mcp`);
    assert.deepEqual(
      late.map(names),
      [['syn__tool-4'], ['syn__tool-7', 'syn__tool-8']],
      'the empty first page was read past',
    );
    const early = await walk(`${gateway.url}/profiles/early/mcp`);
    assert.deepEqual(early.flatMap(names), ['syn__tool-1']);
    assert.equal(early.at(-1)!.body.result.nextCursor, undefined);
  });

  test('a name outside the profile answers exactly as /mcp answers that name when nobody lists it', async () => {
    const outside = await post(
      `${gateway.url}/profiles/early/mcp`,
      request('tools/call', { name: 'syn__tool-2', arguments: {} }, 9),
    );
    const unknown = await post(`${gateway.url}/mcp`, request('tools/call', { name: 'syn__tool-99', arguments: {} }, 9));
    assertSameBut(outside, 'syn__tool-2', unknown, 'syn__tool-99');
  });

  test('a reload adds and removes profiles, and ends listen streams opened under the old ones', async () => {
    const listen = await openListen(`${gateway.url}/profiles/late/mcp`, { toolsListChanged: true });
    await gateway.reload(config({ ...PAGED, added: { tools: ['modern__echo'], rename: { modern__echo: 'echo' } } }));
    assert.ok(
      await until(() => listen.messages.some((m) => m.id === listen.id && 'result' in m), 5_000),
      'the listen stream ended with its result',
    );
    listen.close();
    const added = await post(`${gateway.url}/profiles/added/mcp`, request('tools/list'));
    assert.deepEqual(names(added), ['echo']);
    await gateway.reload(config({ late: PAGED.late }));
    const removed = await post(`${gateway.url}/profiles/added/mcp`, request('tools/list'));
    assert.equal(removed.status, 404);
    assert.match(removed.body.error.message, /^No profile named 'added'/);
    assert.equal((await post(`${gateway.url}/profiles/early/mcp`, request('tools/list'))).status, 404);
    assert.equal(
      (await post(`${gateway.url}/profiles/late/mcp`, request('tools/list'))).status,
      200,
      'an unchanged profile stays',
    );
  });
});

describe('pins hold on a profile and in search mode', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startReadyGateway(
      { modern: fixture('modern-server', { env: { FIXTURE_REDESCRIBE: '1' } }) },
      {},
      {
        auth: { anonymous: true },
        policies: [
          {
            name: 'pinned',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['modern'], tools: ['modern__echo', 'modern__pid'] },
            pin: true,
          },
          // redescribe itself is not pinned, so calling it does not make the gateway list (and pin) tools.
          {
            name: 'admin',
            principals: { ids: ['anonymous'] },
            allow: { servers: ['modern'], tools: ['modern__redescribe'] },
          },
        ],
        profiles: { p: { tools: ['modern__*'], rename: { modern__echo: 'say' } } },
      },
    );
  });
  after(() => gateway?.close());

  test(
    'a pinned tool is callable by its public name; ' + 'once its definition changes it is withheld there too',
    async () => {
      const profile = `${gateway.url}/profiles/p/mcp`;
      const search = `${gateway.url}/search/mcp`;
      // Before any listing: the gateway lists through /mcp to pin the definition, then calls.
      const first = await post(profile, request('tools/call', { name: 'say', arguments: { text: 'hi' } }));
      assert.deepEqual(first.body.result?.content, [{ type: 'text', text: 'hi' }], JSON.stringify(first.body));
      const found = async () =>
        (
          await post(
            search,
            request('tools/call', { name: 'search_tools', arguments: { query: 'echo text back', limit: 50 } }),
          )
        ).body.result.structuredContent.tools.map((t: { name: string }) => t.name);
      assert.ok((await found()).includes('modern__echo'));

      const changed = await post(
        profile,
        request('tools/call', {
          name: 'modern__redescribe',
          arguments: { tool: 'echo', description: 'Echo text back, and mail it elsewhere' },
        }),
      );
      assert.deepEqual(
        changed.body.result?.content,
        [{ type: 'text', text: 'redescribed echo' }],
        JSON.stringify(changed.body),
      );
      assert.ok(
        await until(async () => !names(await post(profile, request('tools/list'))).includes('say'), 5_000),
        'withheld from the list',
      );
      const refused = await post(profile, request('tools/call', { name: 'say', arguments: { text: 'hi' } }, 3));
      assert.deepEqual(refused.body, { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'Unknown tool: say' } });
      assert.ok(
        await until(async () => !(await found()).includes('modern__echo'), 5_000),
        'withheld from search results',
      );
      const viaCallTool = await post(
        search,
        request('tools/call', { name: 'call_tool', arguments: { name: 'modern__echo', arguments: { text: 'hi' } } }, 4),
      );
      assert.deepEqual(viaCallTool.body, {
        jsonrpc: '2.0',
        id: 4,
        error: { code: -32602, message: 'Unknown tool: modern__echo' },
      });
    },
  );
});

describe("a profile's lists come from the cache", () => {
  test('walking a profile twice asks the upstream only the first time', async () => {
    const gateway = await startReadyGateway(
      { syn: synthetic },
      {},
      { profiles: { late: { tools: ['syn__tool-4', 'syn__tool-8'] } } },
    );
    try {
      const count = async () =>
        Number(
          (await post(`${gateway.url}/servers/syn/mcp`, request('tools/call', { name: '__count', arguments: {} }))).body
            .result.content[0].text,
        );
      const walk = async () => {
        let cursor: string | undefined;
        const seen: string[] = [];
        do {
          const page = await post(
            `${gateway.url}/profiles/late/mcp`,
            request('tools/list', cursor === undefined ? {} : { cursor }),
          );
          seen.push(...names(page));
          cursor = page.body.result.nextCursor;
        } while (cursor !== undefined);
        return seen;
      };
      assert.deepEqual(await walk(), ['syn__tool-4', 'syn__tool-8']);
      const afterFirst = await count();
      assert.equal(afterFirst, 3, 'one upstream call per page of the synthetic server');
      assert.deepEqual(await walk(), ['syn__tool-4', 'syn__tool-8']);
      assert.equal(await count(), afterFirst);
    } finally {
      await gateway.close();
    }
  });
});
