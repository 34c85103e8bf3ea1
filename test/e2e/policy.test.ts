// Allow-list policies end to end, through real HTTP: who sees and calls what on /mcp and on
// /servers/<name>/mcp, refusals that read exactly like unknown names, the audit log, CEL conditions, tool
// pinning across a restart, reloads, no token passthrough, and anonymous callers.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig, type GatewayConfig } from '../../src/config/config.js';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { eventually, everything, fixture, post, request, ROOT, send, type Answer } from './harness.js';
import { startReadyGateway } from './ready-gateway.js';
import { tempDir } from '../temp.js';

const tmp = tempDir('mcp-gw-policy-');
after(() => rmSync(tmp, { recursive: true, force: true }));

type Who = 'alice' | 'bob' | 'carol' | 'anonymous';
const KEYS = {
  alice: 'alice-key-0123456789',
  bob: 'bob-key-0123456789-abcdef',
  carol: 'carol-key-0123456789',
} as const;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const API_KEYS = [
  { key: KEYS.alice, principal: 'alice', groups: ['support'] },
  { sha256: sha256(KEYS.bob), principal: 'bob', groups: ['ops'] },
  { key: KEYS.carol, principal: 'carol' },
];

/** The Authorization header of a principal (none for anonymous). */
const credentials = (who: Who): Record<string, string> =>
  who === 'anonymous' ? {} : { authorization: `Bearer ${KEYS[who]}` };

/** The config the harness builds, for reload(). */
function configOf(servers: Record<string, unknown>, rest: Record<string, unknown>): GatewayConfig {
  return parseConfig({ listen: { port: 0 }, servers, ...rest }, 'test', ROOT);
}

/** The answer a caller gets for a name no server offers. */
const unknownTool = (id: unknown, name: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32602, message: `Unknown tool: ${name}` },
});
const unknownPrompt = (id: unknown, name: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32602, message: `Unknown prompt: ${name}` },
});
const resourceNotFound = (id: unknown, uri: string) => ({
  jsonrpc: '2.0',
  id,
  error: { code: -32602, message: `Resource not found: ${uri}`, data: { uri } },
});

/**
 * The audit file's lines once `ready` holds of them. An allowed request's line is written after its answer
 * is sent, so a test that has its answer may still have to wait for the line.
 */
async function readAudit(
  gateway: RunningGateway,
  file: string,
  ready: (lines: any[]) => boolean = () => true,
): Promise<any[]> {
  let lines: any[] = [];
  await eventually(async () => {
    await gateway.security.current.audit!.flush();
    lines = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.trim())
          .map((line) => JSON.parse(line))
      : [];
    return ready(lines);
  }, 2_000).catch(() => undefined); // the assertions that follow say what is missing
  return lines;
}

/** Headers that matter to a client, without those that vary per answer. */
function stableHeaders(answer: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  answer.headers.forEach((value, key) => {
    if (key !== 'date' && key !== 'content-length') out[key] = value;
  });
  return out;
}

// ---- 1. the table -------------------------------------------------------------------------------------

// a and b run the modern fixture (tools echo, pid, crash, progress, ...; prompt greet; resource
// fixture://hello); ev runs the everything server (legacy).
const SERVERS = ['a', 'b', 'ev'] as const;
type Server = (typeof SERVERS)[number];

const TABLE_POLICIES = [
  {
    name: 'support',
    principals: { groups: ['support'] },
    allow: {
      servers: ['a', 'ev'],
      tools: ['a__echo', 'a__p*', 'a__crash', 'ev__echo'],
      prompts: ['a__greet', 'ev__completable-prompt'],
      resources: ['fixture://**', 'demo://resource/static/document/features.md'],
    },
    deny: { tools: ['a__crash'] },
  },
  // Deny wins across policies: a__pid is allowed to support by a__p* above.
  { name: 'no-pid', principals: { groups: ['support', 'ops'] }, deny: { tools: ['*__pid'] } },
  // Naming a server without globs for a kind allows all of that kind there.
  {
    name: 'ops',
    principals: { groups: ['ops'] },
    allow: { servers: ['b'] },
    deny: { tools: ['b__crash'], prompts: ['b__greet'] },
  },
  {
    name: 'ops-reads',
    principals: { ids: ['bob'] },
    allow: { servers: ['ev'], resources: ['demo://resource/static/document/*'] },
    deny: { tools: ['ev__echo'] },
  },
  // A denied server is out of reach even when allowed.
  {
    name: 'public',
    principals: { ids: ['anonymous'] },
    allow: {
      servers: ['ev', 'b'],
      tools: ['ev__echo'],
      prompts: ['ev__simple-prompt'],
      resources: ['demo://resource/static/document/startup.md'],
    },
    deny: { servers: ['b'] },
  },
];

/** What each principal may see and use, written from the policies above by hand. */
interface Expectation {
  reach: readonly Server[];
  tools(server: Server, name: string): boolean;
  prompts(server: Server, name: string): boolean;
  resources(server: Server, uri: string): boolean;
}
const DOCS = 'demo://resource/static/document/';
const EXPECTED: Record<Who, Expectation> = {
  alice: {
    reach: ['a', 'ev'],
    tools: (_, name) => ['a__echo', 'a__progress', 'ev__echo'].includes(name),
    prompts: (_, name) => ['a__greet', 'ev__completable-prompt'].includes(name),
    resources: (server, uri) =>
      (server === 'a' && uri.startsWith('fixture://')) || (server === 'ev' && uri === `${DOCS}features.md`),
  },
  bob: {
    reach: ['b', 'ev'],
    tools: (server, name) =>
      (server === 'b' && !['b__crash', 'b__pid'].includes(name)) || (server === 'ev' && name !== 'ev__echo'),
    prompts: (server) => server === 'ev',
    resources: (server, uri) =>
      server === 'b' || (server === 'ev' && uri.startsWith(DOCS) && !uri.slice(DOCS.length).includes('/')),
  },
  carol: { reach: [], tools: () => false, prompts: () => false, resources: () => false },
  anonymous: {
    reach: ['ev'],
    tools: (_, name) => name === 'ev__echo',
    prompts: (_, name) => name === 'ev__simple-prompt',
    resources: (server, uri) => server === 'ev' && uri === `${DOCS}startup.md`,
  },
};

// What the table calls. Calls that the expectations deny must never run (crash would take its server down).
const TOOL_PROBES: [Server, string, Record<string, unknown>][] = [
  ['a', 'echo', { text: 'hi' }],
  ['a', 'pid', {}],
  ['a', 'crash', {}],
  ['a', 'progress', { steps: 1 }],
  ['a', 'nosuch', {}],
  ['b', 'echo', { text: 'hi' }],
  ['b', 'pid', {}],
  ['b', 'crash', {}],
  ['ev', 'echo', { message: 'hi' }],
  ['ev', 'get-sum', { a: 1, b: 2 }],
];
const PROMPT_PROBES: [Server, string, Record<string, string>, { name: string; value: string }][] = [
  ['a', 'greet', { name: 'Ada' }, { name: 'name', value: 'A' }],
  ['b', 'greet', { name: 'Ada' }, { name: 'name', value: 'A' }],
  ['ev', 'simple-prompt', {}, { name: 'x', value: 'E' }],
  ['ev', 'args-prompt', { city: 'Oslo' }, { name: 'city', value: 'O' }],
  ['ev', 'completable-prompt', { department: 'Engineering', name: 'Bob' }, { name: 'department', value: 'E' }],
];
// fixture://hello is offered by both a and b, so on /mcp it belongs to nobody: probed on a's and b's own endpoints
// only.
const RESOURCE_PROBES: [Server, string][] = [
  ['a', 'fixture://hello'],
  ['b', 'fixture://hello'],
  ['ev', `${DOCS}features.md`],
  ['ev', `${DOCS}startup.md`],
  ['ev', `${DOCS}architecture.md`],
];

const LIST_ITEMS = {
  'tools/list': ['tools', 'name'],
  'prompts/list': ['prompts', 'name'],
  'resources/list': ['resources', 'uri'],
} as const;
type ListMethod = keyof typeof LIST_ITEMS;

describe('the allow-list table: principals × items × methods × endpoints', () => {
  let gateway: RunningGateway;
  /** Every upstream's unfiltered lists, straight from the upstream (not through the edge or its policy). */
  const inventory = new Map<string, string[]>();

  before(async () => {
    gateway = await startReadyGateway(
      { a: fixture('modern-server'), b: fixture('modern-server'), ev: everything },
      {},
      {
        auth: { anonymous: true, apiKeys: API_KEYS },
        policies: TABLE_POLICIES,
        audit: { destination: path.join(tmp, 'table-audit.jsonl') },
      },
    );
    for (const server of SERVERS) {
      for (const [method, [items, key]] of Object.entries(LIST_ITEMS)) {
        const answer: any = await gateway.upstreams.get(server)!.request(request(method));
        assert.ok('result' in answer, `${server} ${method}: ${JSON.stringify(answer)}`);
        assert.equal(answer.result.nextCursor, undefined, 'the fixtures list everything on one page');
        inventory.set(
          `${server} ${method}`,
          answer.result[items].map((item: Record<string, string>) => item[key]),
        );
      }
    }
  });
  after(() => gateway?.close());

  /** The names an endpoint should list for a principal: its upstreams' items that the expectation allows. */
  function expectedList(who: Who, endpoint: Server | 'mcp', method: ListMethod): string[] {
    const expectation = EXPECTED[who];
    const servers = endpoint === 'mcp' ? SERVERS : [endpoint];
    const names: string[] = [];
    for (const server of servers) {
      for (const item of inventory.get(`${server} ${method}`)!) {
        if (method === 'resources/list') {
          if (endpoint === 'mcp' && ambiguous(item)) continue;
          if (expectation.resources(server, item)) names.push(item);
        } else {
          const publicName = `${server}__${item}`;
          const allowed =
            method === 'tools/list' ? expectation.tools(server, publicName) : expectation.prompts(server, publicName);
          if (allowed) names.push(endpoint === 'mcp' ? publicName : item);
        }
      }
    }
    return names.sort();
  }

  const ambiguous = (uri: string): boolean =>
    SERVERS.filter((s) => inventory.get(`${s} resources/list`)!.includes(uri)).length > 1;

  test('the fixtures offer what the table probes', () => {
    for (const [server, name] of TOOL_PROBES)
      if (name !== 'nosuch') assert.ok(inventory.get(`${server} tools/list`)!.includes(name), `${server} ${name}`);
    for (const [server, name] of PROMPT_PROBES)
      assert.ok(inventory.get(`${server} prompts/list`)!.includes(name), `${server} ${name}`);
    for (const [server, uri] of RESOURCE_PROBES)
      assert.ok(inventory.get(`${server} resources/list`)!.includes(uri), `${server} ${uri}`);
    assert.ok(!inventory.get('a tools/list')!.includes('nosuch'));
  });

  for (const who of ['alice', 'bob', 'carol', 'anonymous'] as const) {
    for (const endpoint of ['mcp', ...SERVERS] as const) {
      const label = endpoint === 'mcp' ? '/mcp' : `/servers/${endpoint}/mcp`;
      test(`${who} on ${label}`, async () => {
        const url = `${gateway.url}${label}`;
        const expectation = EXPECTED[who];
        if (endpoint !== 'mcp' && !expectation.reach.includes(endpoint)) {
          // Reaches nothing there: every request answers as for a server that does not exist.
          const bodies = [
            request('tools/list'),
            request('tools/call', { name: 'echo', arguments: { text: 'x' } }),
            request('prompts/get', { name: 'greet' }),
            request('resources/read', { uri: 'fixture://hello' }),
          ];
          for (const body of bodies) {
            const answer = await send(url, body, credentials(who));
            const missing = await send(`${gateway.url}/servers/zzz/mcp`, body, credentials(who));
            assert.equal(answer.status, 404, JSON.stringify(answer.body));
            assert.deepEqual(stableHeaders(answer), stableHeaders(missing));
            assert.deepEqual(JSON.parse(JSON.stringify(answer.body).replace(`'${endpoint}'`, "'zzz'")), missing.body);
          }
          return;
        }

        for (const method of Object.keys(LIST_ITEMS) as ListMethod[]) {
          const answer = await send(url, request(method), credentials(who));
          assert.equal(answer.status, 200, JSON.stringify(answer.body));
          const [items, key] = LIST_ITEMS[method];
          let listed: string[] = answer.body.result[items].map((item: Record<string, string>) => item[key]);
          if (endpoint === 'mcp' && method === 'resources/list') listed = listed.filter((uri) => !ambiguous(uri));
          assert.deepEqual(
            listed.sort(),
            expectedList(who, endpoint, method),
            `${method} lists exactly what ${who} may see`,
          );
          assert.equal(answer.body.result.cacheScope, 'private', `${method}: a filtered list is private`);
        }

        const here = (server: Server): boolean => endpoint === 'mcp' || endpoint === server;
        const shown = (server: Server, name: string): string => (endpoint === 'mcp' ? `${server}__${name}` : name);

        for (const [server, name, args] of TOOL_PROBES.filter(([s]) => here(s))) {
          const body = request('tools/call', { name: shown(server, name), arguments: args });
          const answer = await send(url, body, credentials(who));
          assert.equal(answer.status, 200);
          if (expectation.tools(server, `${server}__${name}`)) {
            assert.ok(
              'result' in answer.body && answer.body.result.isError !== true,
              `${who} may call ${name}: ${JSON.stringify(answer.body)}`,
            );
          } else {
            assert.deepEqual(answer.body, unknownTool(body.id, shown(server, name)), `${who} may not call ${name}`);
          }
        }

        for (const [server, name, args, argument] of PROMPT_PROBES.filter(([s]) => here(s))) {
          const allowed = expectation.prompts(server, `${server}__${name}`);
          const get = request('prompts/get', { name: shown(server, name), arguments: args });
          const got = await send(url, get, credentials(who));
          if (allowed)
            assert.ok(
              'result' in got.body && Array.isArray(got.body.result.messages),
              `${who} may get ${name}: ${JSON.stringify(got.body)}`,
            );
          else assert.deepEqual(got.body, unknownPrompt(get.id, shown(server, name)), `${who} may not get ${name}`);

          const complete = request('completion/complete', {
            ref: { type: 'ref/prompt', name: shown(server, name) },
            argument,
          });
          const completed = await send(url, complete, credentials(who));
          if (!allowed) {
            assert.deepEqual(
              completed.body,
              unknownPrompt(complete.id, shown(server, name)),
              `${who} may not complete ${name}`,
            );
          } else if (name === 'completable-prompt') {
            assert.deepEqual(
              completed.body.result?.completion?.values,
              ['Engineering'],
              JSON.stringify(completed.body),
            );
          } else {
            // Reached the upstream (the modern fixture has no completions: its own -32601, not "unknown").
            assert.notDeepEqual(
              completed.body,
              unknownPrompt(complete.id, shown(server, name)),
              `${who} may complete ${name}`,
            );
            assert.notEqual(completed.body.error?.code, -32602, JSON.stringify(completed.body));
          }
        }

        for (const [server, uri] of RESOURCE_PROBES.filter(
          ([s, u]) => here(s) && !(endpoint === 'mcp' && ambiguous(u)),
        )) {
          const body = request('resources/read', { uri });
          const answer = await send(url, body, credentials(who));
          if (expectation.resources(server, uri))
            assert.equal(
              answer.body.result?.contents?.[0]?.uri,
              uri,
              `${who} may read ${uri}: ${JSON.stringify(answer.body).slice(0, 300)}`,
            );
          else assert.deepEqual(answer.body, resourceNotFound(body.id, uri), `${who} may not read ${uri}`);
        }
      });
    }
  }

  test('discover on /mcp speaks only of what the principal reaches', async () => {
    const alice = await send(`${gateway.url}/mcp`, request('server/discover'), credentials('alice'));
    assert.ok(alice.body.result?.capabilities?.tools, JSON.stringify(alice.body));
    assert.equal(alice.body.result.cacheScope, 'private');
    const carol = await send(`${gateway.url}/mcp`, request('server/discover'), credentials('carol'));
    assert.deepEqual(carol.body.result?.capabilities, {}, JSON.stringify(carol.body));
  });

  test('the denied calls above never ran: crash was refused, so a and b are still the first children', () => {
    for (const server of ['a', 'b']) assert.equal(gateway.upstreams.get(server)!.status().restarts, 0, server);
  });
});

// ---- 2. denied and unknown are indistinguishable; the audit log tells them apart ---------------------

describe('a denied item answers exactly like one that does not exist', () => {
  const auditFile = path.join(tmp, 'audit.jsonl');
  const servers = { a: fixture('modern-server'), ev: everything };
  const rest = (auditArguments: boolean) => ({
    auth: { anonymous: true, apiKeys: API_KEYS },
    policies: [
      TABLE_POLICIES[0]!,
      {
        name: 'public',
        principals: { ids: ['anonymous'] },
        allow: {
          servers: ['ev'],
          tools: ['ev__echo'],
          prompts: ['ev__simple-prompt'],
          resources: [`${DOCS}startup.md`],
        },
      },
    ],
    audit: { destination: auditFile, arguments: auditArguments },
  });
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startReadyGateway(servers, {}, rest(false));
  });
  after(() => gateway?.close());

  /** Sends both requests with the same id and asserts the answers differ only in the name they repeat. */
  async function assertSame(
    url: string,
    who: Who,
    make: (name: string) => [string, Record<string, unknown>],
    denied: string,
    missing: string,
  ): Promise<void> {
    const id = 4242;
    const a = await send(url, request(...make(denied), id), credentials(who));
    const b = await send(url, request(...make(missing), id), credentials(who));
    assert.equal(a.status, b.status);
    assert.equal(a.headers.get('content-type'), 'application/json');
    assert.deepEqual(stableHeaders(a), stableHeaders(b));
    assert.equal(
      JSON.stringify(a.body).split(denied).join('<name>'),
      JSON.stringify(b.body).split(missing).join('<name>'),
      `${url}: ${JSON.stringify(a.body)} vs ${JSON.stringify(b.body)}`,
    );
    assert.ok('error' in a.body, JSON.stringify(a.body));
  }

  const toolCall = (name: string): [string, Record<string, unknown>] => [
    'tools/call',
    { name, arguments: { text: 'top-secret-argument' } },
  ];
  const promptGet = (name: string): [string, Record<string, unknown>] => ['prompts/get', { name }];
  const read = (uri: string): [string, Record<string, unknown>] => ['resources/read', { uri }];

  test('tools: a denied existing tool (deny rule) vs a missing one, on /mcp and /servers/a/mcp', async () => {
    await assertSame(`${gateway.url}/mcp`, 'alice', toolCall, 'a__crash', 'a__nosuch');
    await assertSame(`${gateway.url}/servers/a/mcp`, 'alice', toolCall, 'crash', 'nosuch');
    // An existing tool merely outside the allow-list reads the same.
    await assertSame(`${gateway.url}/mcp`, 'alice', toolCall, 'a__slow', 'a__nosuch');
    await assertSame(`${gateway.url}/servers/a/mcp`, 'alice', toolCall, 'slow', 'nosuch');
    assert.equal(gateway.upstreams.get('a')!.status().restarts, 0, 'crash never ran');
  });

  test("prompts: denied existing vs missing, on /mcp and on the server's endpoint", async () => {
    await assertSame(`${gateway.url}/mcp`, 'anonymous', promptGet, 'ev__args-prompt', 'ev__nosuch-prompt');
    await assertSame(`${gateway.url}/servers/ev/mcp`, 'anonymous', promptGet, 'args-prompt', 'nosuch-prompt');
  });

  test("resources: denied existing vs missing, on /mcp and on the server's endpoint", async () => {
    await assertSame(`${gateway.url}/mcp`, 'alice', read, `${DOCS}startup.md`, `${DOCS}nosuch.md`);
    await assertSame(`${gateway.url}/servers/ev/mcp`, 'alice', read, `${DOCS}startup.md`, `${DOCS}nosuch.md`);
  });

  test('the audit log records the decision, the rule and the target; no arguments; never the key', async () => {
    const lines = await readAudit(gateway, auditFile);
    const find = (endpoint: string, target: string) =>
      lines.filter((l) => l.endpoint === endpoint && l.target === target && l.method !== 'tools/list');
    const crash = find('mcp', 'a__crash');
    assert.ok(crash.length >= 1, JSON.stringify(lines));
    for (const line of crash) {
      assert.equal(line.principal, 'alice');
      assert.equal(line.via, 'api-key');
      assert.equal(line.decision, 'deny');
      assert.equal(line.rule, 'deny in policy support');
      assert.equal(line.method, 'tools/call');
      assert.equal('arguments' in line, false, 'arguments are off by default');
    }
    const slow = find('mcp', 'a__slow')[0];
    assert.equal(slow?.decision, 'deny');
    assert.equal(slow?.rule, 'no policy allows it');
    const missing = find('mcp', 'a__nosuch')[0];
    assert.equal(missing?.decision, 'deny');
    assert.equal(missing?.rule, 'no policy allows it');
    const onServer = lines.find((l) => l.endpoint === 'a' && l.method === 'tools/call' && /crash/.test(l.target));
    assert.equal(onServer?.rule, 'deny in policy support', JSON.stringify(onServer));
    const prompt = lines.find(
      (l) => l.principal === 'anonymous' && l.method === 'prompts/get' && l.target === 'ev__args-prompt',
    );
    assert.equal(prompt?.decision, 'deny');
    assert.equal(prompt?.rule, 'no policy allows it');
    const resource = lines.find((l) => l.method === 'resources/read' && l.target === `${DOCS}startup.md`);
    assert.equal(resource?.decision, 'deny');
    assert.equal(resource?.rule, 'no policy allows it');
    const text = readFileSync(auditFile, 'utf8');
    for (const key of Object.values(KEYS)) assert.ok(!text.includes(key), 'the audit log never holds an API key');
    assert.ok(!/bearer/i.test(text));
    assert.ok(!text.includes('top-secret-argument'));
  });

  test('with audit.arguments: true the arguments are recorded, still without the key', async () => {
    await gateway.reload(configOf(servers, rest(true)));
    const body = request('tools/call', { name: 'a__crash', arguments: { text: 'recorded-argument' } });
    const answer = await send(`${gateway.url}/mcp`, body, credentials('alice'));
    assert.deepEqual(answer.body, unknownTool(body.id, 'a__crash'));
    const allowed = request('tools/call', { name: 'a__echo', arguments: { text: 'allowed-argument' } });
    assert.equal(
      (await send(`${gateway.url}/mcp`, allowed, credentials('alice'))).body.result.content[0].text,
      'allowed-argument',
    );
    const lines = await readAudit(gateway, auditFile, (all) =>
      all.some((l) => l.target === 'a__echo' && l.method === 'tools/call'),
    );
    const denied = lines.find((l) => l.target === 'a__crash' && l.arguments !== undefined);
    assert.deepEqual(denied?.arguments, { text: 'recorded-argument' });
    assert.equal(denied?.decision, 'deny');
    const ran = lines.find((l) => l.target === 'a__echo' && l.method === 'tools/call');
    assert.equal(ran?.decision, 'allow');
    assert.equal(ran?.rule, 'policy support');
    assert.deepEqual(ran?.arguments, { text: 'allowed-argument' });
    const text = readFileSync(auditFile, 'utf8');
    for (const key of Object.values(KEYS)) assert.ok(!text.includes(key), 'the audit log never holds an API key');
  });
});

// Former gaps, kept as tests:
// - inside an allowed server, a name the upstream does not have gets the same words as a name a deny rule
//   covers, so a caller cannot tell which names are denied;
// - a policy of tool/prompt globs without servers reaches only servers whose names its globs can match, so
//   another server answers the 404 of a server that does not exist.
describe('denied names and unreached servers look like missing ones', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startReadyGateway(
      { b: fixture('modern-server') },
      {},
      {
        auth: { anonymous: false, apiKeys: API_KEYS },
        policies: [
          ...TABLE_POLICIES.filter((p) => p.name === 'ops'),
          // Globs only, for names no server here can have: carol can reach nothing on b.
          { name: 'elsewhere', principals: { ids: ['carol'] }, allow: { tools: ['zz__*'] } },
        ],
        audit: { destination: path.join(tmp, 'deny-inside-audit.jsonl') },
      },
    );
  });
  after(() => gateway?.close());

  for (const [label, path, denied, missing] of [
    ['/mcp', '/mcp', 'b__crash', 'b__nosuch'],
    ['/servers/b/mcp', '/servers/b/mcp', 'crash', 'nosuch'],
  ] as const) {
    test(`tools on ${label} read the same`, async () => {
      const a = await send(
        `${gateway.url}${path}`,
        request('tools/call', { name: denied, arguments: {} }, 'x'),
        credentials('bob'),
      );
      const b = await send(
        `${gateway.url}${path}`,
        request('tools/call', { name: missing, arguments: {} }, 'x'),
        credentials('bob'),
      );
      assert.equal(
        JSON.stringify(a.body).split(denied).join('<name>'),
        JSON.stringify(b.body).split(missing).join('<name>'),
      );
    });
  }

  test('a policy of globs only reaches no server whose names its globs cannot match', async () => {
    const answer = await send(`${gateway.url}/servers/b/mcp`, request('tools/list'), credentials('carol'));
    const missing = await send(`${gateway.url}/servers/zzz/mcp`, request('tools/list'), credentials('carol'));
    assert.equal(answer.status, 404, JSON.stringify(answer.body));
    assert.deepEqual(JSON.parse(JSON.stringify(answer.body).replace("'b'", "'zzz'")), missing.body);
  });
});

// ---- 3. CEL conditions --------------------------------------------------------------------------------

describe('when: conditions in CEL', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startReadyGateway(
      { a: fixture('modern-server') },
      {},
      {
        auth: { anonymous: false, apiKeys: API_KEYS },
        policies: [
          {
            name: 'guarded',
            principals: { groups: ['support', 'ops'] },
            allow: { servers: ['a'], tools: ['a__echo', 'a__slow'] },
            when: [
              { tool: 'a__echo', expr: "args.text != 'forbidden' && principal.groups.exists(g, g == 'support')" },
              { tool: 'a__slow', expr: 'args.limit <= 100' },
            ],
          },
        ],
        audit: { destination: path.join(tmp, 'cel-audit.jsonl') },
      },
    );
  });
  after(() => gateway?.close());

  const call = (who: Who, endpoint: string, name: string, args: Record<string, unknown>) =>
    send(`${gateway.url}${endpoint}`, request('tools/call', { name, arguments: args }), credentials(who));

  test('a call whose arguments satisfy the condition runs; another value is refused naming the policy', async () => {
    for (const [endpoint, name] of [
      ['/mcp', 'a__echo'],
      ['/servers/a/mcp', 'echo'],
    ] as const) {
      const ok = await call('alice', endpoint, name, { text: 'fine' });
      assert.deepEqual(ok.body.result?.content, [{ type: 'text', text: 'fine' }], JSON.stringify(ok.body));
      const refused = await call('alice', endpoint, name, { text: 'forbidden' });
      assert.equal(refused.status, 200);
      assert.equal(refused.body.error?.code, -32602, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /refused by policy/i);
      assert.match(refused.body.error.message, /guarded/);
    }
  });

  test(
    'the principal is part of the condition: ' + 'the same call is refused to a principal outside the group',
    async () => {
      const refused = await call('bob', '/mcp', 'a__echo', { text: 'fine' });
      assert.equal(refused.body.error?.code, -32602, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, /refused by policy/i);
    },
  );

  test('an expression that fails at run time denies', async () => {
    const missing = await call('alice', '/mcp', 'a__slow', { ms: 1 });
    assert.equal(missing.body.error?.code, -32602, JSON.stringify(missing.body));
    assert.match(missing.body.error.message, /refused by policy/i);
    const tooBig = await call('alice', '/mcp', 'a__slow', { ms: 1, limit: 1000 });
    assert.equal(tooBig.body.error?.code, -32602, JSON.stringify(tooBig.body));
    const within = await call('alice', '/mcp', 'a__slow', { ms: 1, limit: 5 });
    assert.deepEqual(within.body.result?.content, [{ type: 'text', text: 'done' }], JSON.stringify(within.body));
  });

  test('CEL that does not compile is a ConfigError naming policies[0].when[0].expr', () => {
    for (const expr of ["args.text == 'unterminated", '1 + 1']) {
      const raw = {
        servers: { a: fixture('modern-server') },
        policies: [
          { name: 'broken', principals: { ids: ['*'] }, allow: { servers: ['a'] }, when: [{ tool: 'a__echo', expr }] },
        ],
      };
      assert.throws(
        () => parseConfig(raw, 'test', ROOT),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          const problem = error.problems.join('\n');
          assert.match(problem, /policies\[0\]/);
          assert.match(problem, /when\[0\]\.expr/);
          assert.ok(problem.includes(JSON.stringify(expr)), problem);
          return true;
        },
      );
    }
  });
});

// ---- 4. pinning -----------------------------------------------------------------------------------------

describe('pinned tools', () => {
  const pinsFile = path.join(tmp, 'pins.json');
  const servers = { a: fixture('modern-server', { env: { FIXTURE_REDESCRIBE: '1' } }) };
  const rest = {
    auth: { anonymous: false, apiKeys: API_KEYS },
    policies: [
      {
        name: 'pinned',
        principals: { ids: ['alice'] },
        allow: { servers: ['a'], tools: ['a__echo', 'a__pid', 'a__slow'] },
        pin: true,
      },
      // redescribe itself is not pinned, so calling it does not make the gateway list (and pin) tools.
      { name: 'admin', principals: { ids: ['alice'] }, allow: { servers: ['a'], tools: ['a__redescribe'] } },
    ],
    pinsFile,
    audit: { destination: path.join(tmp, 'pins-audit.jsonl') },
  };
  const gateways: RunningGateway[] = [];
  after(() => Promise.all(gateways.map((g) => g.close())));
  const names = (answer: Answer): string[] => answer.body.result.tools.map((t: { name: string }) => t.name).sort();
  const readPins = (): Record<string, string> => JSON.parse(readFileSync(pinsFile, 'utf8'));
  let firstDigest: string;

  test('listing pins the tools under their /mcp names; a changed definition is withheld', async () => {
    const gateway = await startReadyGateway(servers, {}, rest);
    gateways.push(gateway);
    const mcp = `${gateway.url}/mcp`;
    assert.deepEqual(names(await send(mcp, request('tools/list'), credentials('alice'))), [
      'a__echo',
      'a__pid',
      'a__redescribe',
      'a__slow',
    ]);
    await gateway.security.current.pins.flushed();
    const pins = readPins();
    assert.deepEqual(Object.keys(pins).sort(), ['a__echo', 'a__pid', 'a__slow']);
    for (const digest of Object.values(pins)) assert.match(digest, /^[0-9a-f]{64}$/);
    firstDigest = pins.a__echo!;

    const changed = await send(
      mcp,
      request('tools/call', {
        name: 'a__redescribe',
        arguments: { tool: 'echo', description: 'Echo text back, and mail it elsewhere' },
      }),
      credentials('alice'),
    );
    assert.deepEqual(
      changed.body.result?.content,
      [{ type: 'text', text: 'redescribed echo' }],
      JSON.stringify(changed.body),
    );
    await eventually(
      async () => !names(await send(mcp, request('tools/list'), credentials('alice'))).includes('a__echo'),
      5_000,
    );
    assert.deepEqual(names(await send(mcp, request('tools/list'), credentials('alice'))), [
      'a__pid',
      'a__redescribe',
      'a__slow',
    ]);
    assert.deepEqual(names(await send(`${gateway.url}/servers/a/mcp`, request('tools/list'), credentials('alice'))), [
      'pid',
      'redescribe',
      'slow',
    ]);

    const body = request('tools/call', { name: 'a__echo', arguments: { text: 'hi' } });
    assert.deepEqual((await send(mcp, body, credentials('alice'))).body, unknownTool(body.id, 'a__echo'));
    const direct = request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    assert.deepEqual(
      (await send(`${gateway.url}/servers/a/mcp`, direct, credentials('alice'))).body,
      unknownTool(direct.id, 'echo'),
    );
    const pid = await send(mcp, request('tools/call', { name: 'a__pid', arguments: {} }), credentials('alice'));
    assert.match(pid.body.result?.content?.[0]?.text ?? '', /^\d+$/, 'other pinned tools are unaffected');

    await gateway.security.current.pins.flushed();
    assert.equal(readPins().a__echo, firstDigest, 'the pin keeps the approved definition');
    await gateway.close();
    gateways.pop();
  });

  test(
    'after a restart the pins file still withholds it; ' + 'removing the entry and reloading brings it back',
    async () => {
      assert.ok(firstDigest, 'needs the previous test');
      const gateway = await startReadyGateway(servers, {}, rest);
      gateways.push(gateway);
      const mcp = `${gateway.url}/mcp`;
      // The new child changes echo before this gateway ever lists it: only the pins file knows the old one.
      const changed = await send(
        `${gateway.url}/servers/a/mcp`,
        request('tools/call', {
          name: 'redescribe',
          arguments: { tool: 'echo', description: 'Echo text back, and mail it elsewhere' },
        }),
        credentials('alice'),
      );
      assert.deepEqual(
        changed.body.result?.content,
        [{ type: 'text', text: 'redescribed echo' }],
        JSON.stringify(changed.body),
      );
      // Called before any listing: the gateway lists to check the pin.
      const body = request('tools/call', { name: 'a__echo', arguments: { text: 'hi' } });
      assert.deepEqual((await send(mcp, body, credentials('alice'))).body, unknownTool(body.id, 'a__echo'));
      assert.deepEqual(names(await send(mcp, request('tools/list'), credentials('alice'))), [
        'a__pid',
        'a__redescribe',
        'a__slow',
      ]);

      await gateway.security.current.pins.flushed();
      const pins = readPins();
      assert.equal(pins.a__echo, firstDigest);
      delete pins.a__echo;
      writeFileSync(pinsFile, JSON.stringify(pins));
      await gateway.reload(configOf(servers, rest));

      assert.deepEqual(names(await send(mcp, request('tools/list'), credentials('alice'))), [
        'a__echo',
        'a__pid',
        'a__redescribe',
        'a__slow',
      ]);
      const again = request('tools/call', { name: 'a__echo', arguments: { text: 'back' } });
      assert.deepEqual((await send(mcp, again, credentials('alice'))).body.result?.content, [
        { type: 'text', text: 'back' },
      ]);
      await gateway.security.current.pins.flushed();
      const repinned = readPins().a__echo;
      assert.match(repinned ?? '', /^[0-9a-f]{64}$/);
      assert.notEqual(repinned, firstDigest, 'the new definition is pinned');
    },
  );
});

// ---- 5. reload ------------------------------------------------------------------------------------------

describe('reload', () => {
  const servers = { a: fixture('modern-server') };
  const withPolicy = (tools: string[], extra: Record<string, unknown> = {}) => ({
    auth: { anonymous: false, apiKeys: API_KEYS },
    policies: [{ name: 'support', principals: { groups: ['support'] }, allow: { servers: ['a'], tools } }],
    audit: { destination: path.join(tmp, 'reload-audit.jsonl') },
    ...extra,
  });
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startReadyGateway(servers, {}, withPolicy(['a__echo']));
  });
  after(() => gateway?.close());
  const listed = async (): Promise<string[]> =>
    (await send(`${gateway.url}/mcp`, request('tools/list'), credentials('alice'))).body.result.tools
      .map((t: { name: string }) => t.name)
      .sort();

  test('a changed policy takes effect for the next request', async () => {
    assert.deepEqual(await listed(), ['a__echo']);
    await gateway.reload(configOf(servers, withPolicy(['a__pid'])));
    assert.deepEqual(await listed(), ['a__pid']);
    const body = request('tools/call', { name: 'a__echo', arguments: { text: 'hi' } });
    assert.deepEqual(
      (await send(`${gateway.url}/mcp`, body, credentials('alice'))).body,
      unknownTool(body.id, 'a__echo'),
    );
  });

  test('a reload that cannot be built rejects and the old policy keeps serving', async () => {
    const broken = configOf(
      servers,
      withPolicy(['a__*'], {
        auth: {
          anonymous: false,
          apiKeys: API_KEYS,
          jwt: {
            issuer: 'https://issuer.example',
            audience: 'mcp-gateway',
            publicKeyFile: path.join(tmp, 'no-such-key.pem'),
          },
        },
      }),
    );
    await assert.rejects(gateway.reload(broken), /no-such-key\.pem|publicKeyFile/);
    assert.deepEqual(await listed(), ['a__pid']);
    const body = request('tools/call', { name: 'a__echo', arguments: { text: 'hi' } });
    assert.deepEqual(
      (await send(`${gateway.url}/mcp`, body, credentials('alice'))).body,
      unknownTool(body.id, 'a__echo'),
    );
  });
});

// ---- 6 & 7. no token passthrough; anonymous callers -----------------------------------------------------

describe('credentials and remote upstreams', () => {
  let guarded: ModernHttpServer;
  let open: ModernHttpServer;
  const auditFile = path.join(tmp, 'auth-audit.jsonl');
  let gateway: RunningGateway;
  before(async () => {
    guarded = await startModernHttpServer({ token: 'upstream-secret' });
    open = await startModernHttpServer();
    gateway = await startReadyGateway(
      { s: { url: guarded.url, headers: { authorization: 'Bearer upstream-secret' } }, o: { url: open.url } },
      {},
      { auth: { anonymous: false, apiKeys: API_KEYS }, audit: { destination: auditFile } },
    );
  });
  after(async () => {
    await gateway?.close();
    await guarded?.close();
    await open?.close();
  });

  const calls = (server: ModernHttpServer): number =>
    server.requests.filter((h) => h['mcp-method'] === 'tools/call').length;

  test("the caller's Authorization never reaches an upstream; a configured one does", async () => {
    const targets: [string, string][] = [
      ['/mcp', 's__echo'],
      ['/mcp', 'o__echo'],
      ['/servers/s/mcp', 'echo'],
      ['/servers/o/mcp', 'echo'],
    ];
    for (const [endpoint, name] of targets) {
      assert.equal((await send(`${gateway.url}${endpoint}`, request('tools/list'), credentials('alice'))).status, 200);
      const answer = await send(
        `${gateway.url}${endpoint}`,
        request('tools/call', { name, arguments: { text: `${endpoint} ${name}` } }),
        credentials('alice'),
      );
      assert.deepEqual(
        answer.body.result?.content,
        [{ type: 'text', text: `${endpoint} ${name}` }],
        JSON.stringify(answer.body),
      );
    }
    assert.ok(calls(guarded) >= 2 && calls(open) >= 2, 'the calls reached both upstreams');
    for (const headers of [...guarded.requests, ...open.requests]) {
      for (const value of Object.values(headers))
        assert.ok(!value.includes(KEYS.alice), `a caller's key reached an upstream: ${JSON.stringify(headers)}`);
    }
    for (const headers of guarded.requests) assert.equal(headers.authorization, 'Bearer upstream-secret');
    for (const headers of open.requests) assert.equal(headers.authorization, undefined);
  });

  test(
    'without credentials: ' + '401 with a Bearer challenge and a JSON-RPC error, and nothing reaches the upstream',
    async () => {
      const before = [calls(guarded), calls(open)];
      for (const url of [`${gateway.url}/mcp`, `${gateway.url}/servers/o/mcp`]) {
        const name = url.includes('/servers/') ? 'pid' : 'o__pid';
        const answer = await send(url, request('tools/call', { name, arguments: {} }), credentials('anonymous'));
        assert.equal(answer.status, 401);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer\b/);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal(answer.body.jsonrpc, '2.0');
        assert.equal(typeof answer.body.error?.code, 'number');
        assert.match(answer.body.error.message, /Authentication required/);
        const body = request('tools/call', { name, arguments: {} });
        const wrong = await send(url, body, { authorization: 'Bearer not-a-known-key-000' });
        assert.equal(wrong.status, 401);
        assert.match(wrong.headers.get('www-authenticate') ?? '', /^Bearer\b.*invalid_token/);
      }
      assert.deepEqual([calls(guarded), calls(open)], before, 'no call reached an upstream');
      const lines = await readAudit(gateway, auditFile, (all) =>
        all.some((l) => l.rule === 'authentication: no credentials'),
      );
      const refused = lines.filter((l) => l.decision === 'deny' && /^authentication/.test(l.rule));
      assert.ok(
        refused.some((l) => l.principal === 'anonymous' && l.rule === 'authentication: no credentials'),
        JSON.stringify(lines),
      );
      assert.ok(!readFileSync(auditFile, 'utf8').includes('not-a-known-key-000'), 'a refused token is not logged');
    },
  );

  test(
    'with no auth: section on loopback, ' + 'calls work without credentials and sent ones are not forwarded',
    async () => {
      const anonymous = await startReadyGateway({ o: { url: open.url } });
      try {
        const body = request('tools/call', { name: 'o__echo', arguments: { text: 'anyone' } });
        const answer = await post(`${anonymous.url}/mcp`, body);
        assert.deepEqual(answer.body.result?.content, [{ type: 'text', text: 'anyone' }], JSON.stringify(answer.body));
        const seen = open.requests.length;
        const sent = await send(
          `${anonymous.url}/servers/o/mcp`,
          request('tools/call', { name: 'echo', arguments: { text: 'with a token' } }),
          credentials('carol'),
        );
        assert.deepEqual(
          sent.body.result?.content,
          [{ type: 'text', text: 'with a token' }],
          JSON.stringify(sent.body),
        );
        assert.ok(open.requests.length > seen);
        for (const headers of open.requests) {
          assert.equal(headers.authorization, undefined);
          for (const value of Object.values(headers)) assert.ok(!value.includes(KEYS.carol));
        }
      } finally {
        await anonymous.close();
      }
    },
  );
});
