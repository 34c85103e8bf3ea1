// Guards search quality against regressions: the labelled queries of bench/search over the real fixtures
// alone (195 tools of 19 servers, no synthetic distractors). `npm run bench:search` measures the same at
// 5,000 tools; this stays small enough to run with the unit tests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quality } from '../../bench/search-quality.js';
import { heldOutQueries, labelledQueries, realServers } from '../../bench/search/catalog.js';
import { ToolIndex } from '../../src/search/tool-index.js';

test('recall@5 over the real fixtures is at least 0.85 on the labelled queries, 0.75 on the held-out ones', () => {
  const index = new ToolIndex();
  for (const server of realServers()) index.replace(server.name, server.tools);
  const queries = labelledQueries();
  assert.ok(queries.length >= 200, `${queries.length} labelled queries`);
  const tuned = quality(index, queries);
  assert.ok(tuned.recall >= 0.85, `recall@5 ${tuned.recall.toFixed(3)}; misses:\n${tuned.misses.join('\n')}`);
  const heldOut = quality(index, heldOutQueries());
  assert.ok(
    heldOut.recall >= 0.75,
    `held-out recall@5 ${heldOut.recall.toFixed(3)}; misses:\n${heldOut.misses.join('\n')}`,
  );
});

test('every labelled query names tools that exist in the fixtures', () => {
  const names = new Set(realServers().flatMap((server) => server.tools.map((tool) => tool.name)));
  for (const { query, expected } of [...labelledQueries(), ...heldOutQueries()]) {
    assert.ok(expected.length > 0, query);
    for (const name of expected) assert.ok(names.has(name), `${query}: ${name} is not a fixture tool`);
  }
});
