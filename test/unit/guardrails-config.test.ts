// guardrails: as the config loader takes it: a valid list loads as written; a rule that applies to nobody or
// cannot work is refused naming its key (schema problems, unknown servers, profiles and endpoints, search mode
// switched off), every problem in one pass, a broken rule stood in for so the others keep their indexes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configProblems } from '../config-problems.js';

const base = {
  servers: { crm: { command: 'node' }, web: { command: 'node' } },
  profiles: { support: { tools: ['crm__*'] } },
};

test('a valid list loads as written, detectors of our own included', () => {
  const guardrails = [
    { name: 'cards', on: ['results'], servers: ['crm'], detect: ['creditCard', 'iban'], action: 'redact' },
    {
      name: 'ids',
      on: ['arguments', 'results'],
      endpoints: ['/profiles/support/mcp', '/search/mcp'],
      detect: [{ name: 'employeeId', regex: 'EMP-[0-9]{6}' }],
      action: 'block',
    },
  ];
  const config = parseConfig({ ...base, guardrails }, 'test.yaml', BASE, {});
  assert.deepEqual(config.guardrails, guardrails);
  assert.deepEqual(parseConfig(base, 'test.yaml', BASE, {}).guardrails, []);
});

test('rules that apply to nobody or cannot work are refused, each naming its key', () => {
  const problems = configProblems({
    ...base,
    search: { enabled: false },
    guardrails: [
      { name: 'a', on: ['results'], detect: ['email'], action: 'mask' },
      { name: 'b', on: ['results'], servers: ['nope'], detect: ['email'], action: 'log' },
      {
        name: 'c',
        on: ['results'],
        endpoints: ['/profiles/nope/mcp', '/search/mcp'],
        detect: ['email'],
        action: 'log',
      },
      { name: 'd', on: [], detect: [], action: 'log' },
      { name: 'e', on: ['results'], principals: {}, detect: ['secret'], action: 'log' },
    ],
  }).join('\n');
  assert.match(problems, /guardrails\.0\.action: .*"redact".*"block".*"log"/);
  assert.match(problems, /guardrails\[1\] \(b\)\.servers: no server is named "nope"; servers are crm, web/);
  assert.match(problems, /guardrails\[2\] \(c\)\.endpoints: no endpoint is "\/profiles\/nope\/mcp"/);
  assert.match(problems, /guardrails\[2\] \(c\)\.endpoints: no endpoint is "\/search\/mcp"/);
  assert.match(problems, /guardrails\.3\.on: name a stage/);
  assert.match(problems, /guardrails\.3\.detect: name a detector/);
  assert.match(problems, /guardrails\[4\] \(e\)\.principals: name ids or groups/);
  assert.match(
    problems,
    /guardrails\[4\] \(e\)\.detect\[0\]: no built-in detector is named "secret"; they are creditCard, iban/,
  );
});
