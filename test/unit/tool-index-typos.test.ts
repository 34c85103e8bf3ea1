// Typo tolerance only for words the index does not know: a misspelt word still finds its tool, a word the
// index knows is taken as meant (its one-edit neighbours are not matched), and the vocabulary follows the
// index as servers' tools are replaced and removed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ToolIndex } from '../../src/search/tool-index.js';

const tool = (name: string, description: string) => ({ name, description, inputSchema: { type: 'object' } });
const found = (index: ToolIndex, query: string) => index.search(query).map((hit) => hit.name);

test('a misspelt word finds its tool; a known word does not also match its near neighbours', () => {
  const index = new ToolIndex();
  index.replace('a', [tool('a__issues', 'List the issues of a repository'), tool('a__tissues', 'Order paper tissues')]);
  assert.deepEqual(found(index, 'isues'), ['a__issues'], 'a typo of a word the index has');
  assert.deepEqual(
    found(index, 'issues'),
    ['a__issues'],
    'a known word matches itself (and its prefixes), not the neighbour one edit away',
  );
});

test('the vocabulary follows replace and remove: a word no longer indexed is looked for with typos again', () => {
  const index = new ToolIndex();
  index.replace('a', [tool('a__forecast', 'Weather forecast for a city')]);
  index.replace('b', [tool('b__forcast', 'Cast a spell by force')]);
  assert.deepEqual(found(index, 'forcast'), ['b__forcast'], 'known: exact only');
  index.remove('b');
  assert.deepEqual(found(index, 'forcast'), ['a__forecast'], 'unknown now: the typo finds the forecast');
  index.replace('a', []);
  assert.deepEqual(found(index, 'forecast'), []);
});
