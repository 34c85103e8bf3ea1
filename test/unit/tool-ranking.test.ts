// How the tool index weighs what it reads: the choices tool-index.ts and tool-text.ts make on purpose
// (a title's words that repeat the name count once; a typo's near-miss counts less than the word itself).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../protocol/jsonrpc.js';
import { ToolIndex } from '../../src/search/tool-index.js';

const tool = (name: string, description: string, extra: JsonObject = {}): JsonObject => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
  ...extra,
});
const scores = (index: ToolIndex, query: string) => new Map(index.search(query).map((hit) => [hit.name, hit.score]));

test(
  'a title that repeats the name adds nothing: ' + 'it ranks the tool no higher than the same tool without a title',
  () => {
    const index = new ToolIndex();
    index.replace('a', [tool('a__list_issues', 'Returns the open items of a project.', { title: 'List issues' })]);
    index.replace('b', [tool('b__list_issues', 'Returns the open items of a project.')]);
    index.replace('c', [tool('c__other', 'Something unrelated.')]);
    const found = scores(index, 'list issues');
    assert.ok(found.has('a__list_issues') && found.has('b__list_issues'), [...found.keys()].join());
    assert.equal(found.get('a__list_issues'), found.get('b__list_issues'));
  },
);

test("a title's own words are searched, from `title` or from annotations.title", () => {
  const index = new ToolIndex();
  index.replace('s', [
    tool('s__sequentialthinking', 'Reasons in steps.', { title: 'Sequential Thinking' }),
    tool('s__legacy', 'Does a thing.', { annotations: { title: 'Weather forecast' } }),
    tool('s__other', 'Something unrelated.'),
  ]);
  assert.equal([...scores(index, 'thinking').keys()][0], 's__sequentialthinking');
  assert.deepEqual([...scores(index, 'forecast').keys()], ['s__legacy']);
});

test('a word spelt right beats a near-miss one letter away: "get" ranks get_* above set_* and git_*', () => {
  const index = new ToolIndex();
  index.replace('s', [
    tool('s__set_value', 'Stores a value.'),
    tool('s__git_value', 'Stores a value.'),
    tool('s__get_value', 'Stores a value.'),
  ]);
  const ranked = [...scores(index, 'get value').entries()];
  assert.equal(ranked[0]?.[0], 's__get_value');
  assert.ok(ranked.length === 3, 'the near-misses are still found (typo tolerance)');
  assert.ok((ranked[0]?.[1] ?? 0) > (ranked[1]?.[1] ?? 0));
});
