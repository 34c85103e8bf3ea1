import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { ToolIndex } from '../../src/search/tool-index.js';
import { realServers } from '../../bench/search/catalog.js';

function realIndex(): ToolIndex {
  const index = new ToolIndex();
  for (const server of realServers()) index.replace(server.name, server.tools);
  return index;
}

const tool = (name: string, description: string, extra: JsonObject = {}): JsonObject => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
  ...extra,
});
const names = (index: ToolIndex, query: string, options?: Parameters<ToolIndex['search']>[1]) =>
  index.search(query, options).map((hit) => hit.name);

test('an obvious query ranks the right tool first, with its full definition and a score', () => {
  const index = realIndex();
  const [first, second] = index.search('open a pull request');
  assert.ok(first && second);
  assert.equal(first.name, 'github__create_pull_request');
  assert.equal(first.tool, index.get('github__create_pull_request'), 'the definition as listed, not a copy');
  assert.equal((first.tool.inputSchema as JsonObject).type, 'object');
  assert.ok(first.score >= second.score);
  assert.equal(names(index, 'git status of the repo')[0], 'git__git_status');
  assert.equal(names(index, 'take a screenshot of the page')[0], 'puppeteer__puppeteer_screenshot');
});

test('typos are tolerated: "serch isues" finds search_issues first', () => {
  const index = realIndex();
  assert.equal(names(index, 'serch isues')[0], 'github__search_issues');
  const pullRequests = names(index, 'pul reqest', { limit: 5 });
  assert.equal(pullRequests.length, 5);
  assert.ok(
    pullRequests.every((name) => name.includes('pull_request')),
    pullRequests.join(),
  );
});

test('names are split into words: snake_case, kebab-case and camelCase match their words', () => {
  const index = new ToolIndex();
  index.replace('acme', [
    tool('acme__fetchWeatherReport', 'Returns data.'),
    tool('acme__gzip-file-as-resource', 'Returns data.'),
    tool('acme__other', 'Unrelated.'),
  ]);
  assert.equal(names(index, 'weather report')[0], 'acme__fetchWeatherReport');
  assert.equal(names(index, 'gzip resource')[0], 'acme__gzip-file-as-resource');
  assert.deepEqual(
    names(index, 'acme').sort(),
    ['acme__fetchWeatherReport', 'acme__gzip-file-as-resource', 'acme__other'],
    'the server prefix is a word of every name',
  );
});

test('parameter names and descriptions are searched, one level deep', () => {
  const index = new ToolIndex();
  index.replace('s', [
    tool('s__a', 'Does a thing.', {
      inputSchema: {
        type: 'object',
        properties: { timezone: { type: 'string', description: 'IANA zone like Asia/Tokyo' } },
      },
    }),
    tool('s__b', 'Does another thing.'),
  ]);
  assert.deepEqual(names(index, 'tokyo'), ['s__a']);
  assert.deepEqual(names(index, 'timezone'), ['s__a']);
});

test(
  'allowed filters before the limit: a denied tool never appears, and limit allowed hits come back when more ' +
    'exist',
  () => {
    const index = new ToolIndex();
    const tools = Array.from({ length: 30 }, (_, i) => tool(`s__report_${i}`, `Builds sales report number ${i}.`));
    index.replace('s', tools);
    const allowed = (name: string) => Number(name.split('_').pop()) % 3 === 0; // 10 of 30 allowed
    const hits = index.search('sales report', { limit: 5, allowed });
    assert.equal(hits.length, 5);
    assert.ok(hits.every((hit) => allowed(hit.name)));
    assert.equal(index.search('sales report', { limit: 50, allowed }).length, 10);
    // the best match overall is denied: it is not shown, and nothing about it leaks
    index.replace('t', [tool('t__sales_report', 'Sales report, the best match of all.')]);
    assert.equal(names(index, 'sales report')[0], 't__sales_report');
    assert.ok(
      !names(index, 'sales report', { limit: 50, allowed: (name) => name !== 't__sales_report' }).includes(
        't__sales_report',
      ),
    );
    assert.deepEqual(index.search('sales report', { allowed: () => false }), []);
  },
);

test('limit defaults to 10, is capped at 50, and nonsense limits mean the default', () => {
  const index = new ToolIndex();
  index.replace(
    's',
    Array.from({ length: 80 }, (_, i) => tool(`s__invoice_${i}`, 'Creates an invoice.')),
  );
  assert.equal(index.search('invoice').length, 10);
  assert.equal(index.search('invoice', { limit: 3 }).length, 3);
  assert.equal(index.search('invoice', { limit: 500 }).length, 50);
  for (const limit of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
    assert.equal(index.search('invoice', { limit }).length, 10, String(limit));
  assert.equal(index.search('invoice', { limit: 2.9 }).length, 2);
});

test('replace is incremental: only that server changes; remove forgets a server', () => {
  const index = new ToolIndex();
  index.replace('mail', [tool('mail__send_email', 'Send an email.'), tool('mail__list_inbox', 'List the inbox.')]);
  index.replace('cal', [tool('cal__create_event', 'Create a calendar event.')]);
  assert.equal(index.size, 3);

  index.replace('mail', [
    tool('mail__send_email', 'Send an email message now.'),
    tool('mail__archive_thread', 'Archive a thread.'),
  ]);
  assert.equal(index.size, 3);
  assert.equal(index.get('mail__list_inbox'), undefined);
  assert.deepEqual(names(index, 'inbox'), [], 'a tool the server no longer lists is not found');
  assert.deepEqual(names(index, 'archive thread'), ['mail__archive_thread'], 'a new tool is found at once');
  assert.equal(
    index.get('mail__send_email')?.description,
    'Send an email message now.',
    'the new definition replaces the old',
  );
  assert.deepEqual(names(index, 'calendar event'), ['cal__create_event'], 'the other server is untouched');

  index.remove('mail');
  assert.equal(index.size, 1);
  assert.deepEqual(names(index, 'email'), []);
  assert.equal(index.get('mail__send_email'), undefined);
  assert.deepEqual(names(index, 'calendar event'), ['cal__create_event']);
  index.remove('mail'); // twice, and a server never seen: no-ops
  index.remove('nobody');
  index.replace('cal', []);
  assert.equal(index.size, 0);
  assert.deepEqual(index.search('calendar'), []);
});

test('many replaces of one server leave exactly its latest tools (discarded documents do not come back)', () => {
  const index = new ToolIndex();
  for (let round = 0; round < 50; round++)
    index.replace('s', [tool('s__ping', `Ping round ${round}.`), tool(`s__tool_${round}`, 'Does widgets.')]);
  assert.equal(index.size, 2);
  assert.deepEqual(names(index, 'widgets'), ['s__tool_49']);
  assert.deepEqual(names(index, 'ping'), ['s__ping']);
});

test('a public name two servers list belongs to the first; the second cannot replace or remove it', () => {
  const index = new ToolIndex();
  index.replace('a', [tool('shared__x', 'From server a.')]);
  index.replace('b', [tool('shared__x', 'From server b.'), tool('b__y', 'From b.')]);
  assert.equal(index.get('shared__x')?.description, 'From server a.');
  index.remove('b');
  assert.equal(index.get('shared__x')?.description, 'From server a.');
  assert.equal(index.size, 1);
});

test('odd definitions from untrusted upstreams do not throw and are indexed as far as they make sense', () => {
  const index = new ToolIndex();
  const odd = [
    {
      name: 's__numeric_description',
      description: 42,
      inputSchema: {
        properties: { depth: null, 'quokka key': 'not an object', nested: { description: { not: 'a string' } } },
      },
    },
    { name: 's__no_schema', description: 'Has no wombat at all.' },
    { name: 's__array_schema', description: 'Schema is an array.', inputSchema: [1, 2] },
    { name: 's__array_properties', inputSchema: { properties: ['a', 'b'] } },
    { name: 's__object_title', title: { en: 'x' }, annotations: 'nope', description: null },
    { name: 's__annotations_title', annotations: { title: 'Quarterly Revenue Forecast' } },
    {
      name: 's__huge',
      description: 'zebra '.repeat(100_000),
      inputSchema: {
        properties: Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`p${i}`, { description: 'x' }])),
      },
    },
    { name: 's__no_schema' }, // listed twice
    { description: 'no name' },
    { name: 17 },
    null,
    'a string',
    7,
  ] as unknown as JsonObject[];
  assert.doesNotThrow(() => index.replace('s', odd));
  assert.equal(index.size, 7);
  assert.deepEqual(
    names(index, 'quokka'),
    ['s__numeric_description'],
    'a parameter whose schema is not an object still has its name',
  );
  assert.deepEqual(names(index, 'wombat'), ['s__no_schema']);
  assert.deepEqual(
    names(index, 'revenue forecast'),
    ['s__annotations_title'],
    'annotations.title is the title when there is no title',
  );
  assert.deepEqual(names(index, 'zebra'), ['s__huge']);
  assert.doesNotThrow(() => index.replace('t', 'not an array' as unknown as JsonObject[]));
  assert.equal(index.size, 7);
});

test('queries with nothing to search, or far too much, answer without throwing', () => {
  const index = realIndex();
  assert.deepEqual(index.search(''), []);
  assert.deepEqual(index.search('the a of'), [], 'stop words alone match nothing');
  assert.deepEqual(index.search('!!! ---'), []);
  assert.deepEqual(index.search(42 as unknown as string), []);
  assert.ok(Array.isArray(index.search('read file '.repeat(10_000))));
  assert.deepEqual(new ToolIndex().search('anything'), []);
});
