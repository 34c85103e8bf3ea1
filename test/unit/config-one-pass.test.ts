// Every problem of a config in one pass: unset variables, what the schema refuses, and the checks across keys,
// together, without a problem reported twice or one the file does not have.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configProblems } from '../config-problems.js';

test('an unset variable in a key the schema then refuses is reported once, as the variable', () => {
  assert.deepEqual(configProblems({ listen: { host: '${GW_HOST}' }, servers: {} }), [
    'listen.host: environment variable GW_HOST is not set; set it, or write ${GW_HOST:-default}',
  ]);
});

test('a type error does not hide a clash between servers, nor a policy that does not compile', () => {
  const problems = configProblems({
    cache: { maxEntries: 'many' },
    servers: { a: { command: 'node' }, a__b: { command: 'node' } },
    policies: [{ name: 'p', principals: { ids: ['ann'] }, when: [{ tool: 'a__*', expr: 'args.n <=' }] }],
  });
  assert.equal(problems.length, 3, problems.join('\n'));
  assert.match(problems[0]!, /^cache\.maxEntries: /);
  assert.match(problems[1]!, /^servers\.a and servers\.a__b could give two tools the same name/);
  assert.match(problems[2]!, /^policies\[0\] \(p\)\.when\[0\]\.expr: "args\.n <=" does not compile/);
});

test('a policy that does not validate keeps the next one at its own index', () => {
  const problems = configProblems({
    servers: { a: { command: 'node' } },
    policies: [
      { name: 'p', principals: { ids: ['ann'] }, pin: 'yes' },
      { name: 'q', principals: { ids: ['bob'] }, allow: { servers: ['nope'] } },
    ],
  });
  assert.deepEqual(problems, [
    'policies.0.pin: Invalid input: expected boolean, received string',
    'policies[1] (q).allow.servers: no server is named "nope"; servers are a',
  ]);
});

test('a server that does not validate still exists for the policies that name it', () => {
  const problems = configProblems({
    servers: { crm: { url: 'ftp://crm' } },
    policies: [{ name: 'p', principals: { ids: ['ann'] }, allow: { servers: ['crm'] } }],
  });
  assert.deepEqual(problems, ["servers.crm.url: give the server's MCP endpoint as an http:// or https:// URL"]);
});

test('an API key that does not validate is not reported again as "nobody could call"', () => {
  const short = configProblems({ auth: { apiKeys: [{ key: 'short', principal: 'ann' }] }, servers: {} });
  assert.deepEqual(short, [
    'auth.apiKeys.0.key: an API key must be at least 16 characters; generate one with openssl rand -base64 32',
  ]);
  const unset = configProblems({
    listen: { host: '0.0.0.0' },
    auth: { apiKeys: [{ key: '${ANN_KEY}', principal: 'ann' }] },
    servers: {},
  });
  assert.deepEqual(unset, [
    'auth.apiKeys.0.key: environment variable ANN_KEY is not set; set it, or write ${ANN_KEY:-default}',
  ]);
});

test('listening beyond loopback without auth is reported beside a type error elsewhere', () => {
  const problems = configProblems({ listen: { host: '0.0.0.0' }, cache: { store: 'disk' }, servers: {} });
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.equal(problems[0], 'cache.store: must be one of "memory", "redis"');
  assert.match(problems[1]!, /^listen\.host 0\.0\.0\.0 is reachable from other machines and there is no auth: section/);
});

test('a separator that does not validate is not replaced by the default to look for clashes', () => {
  const problems = configProblems({
    aggregate: { separator: '!!' },
    servers: { a: { command: 'node' }, a__b: { command: 'node' } },
  });
  assert.deepEqual(problems, ['aggregate.separator: the separator is made of A-Z a-z 0-9 _ -']);
});

test('a file whose top level is not a map gets that one problem', () => {
  assert.deepEqual(configProblems('servers'), [
    '(top level): the config is a map of sections, at least  servers: { everything: { command: node, args: ' +
      '[server.js] } }',
  ]);
});
