// MCP Apps' ui:// URIs as /mcp shows them: namespaced with the server's head, read back to the server's own,
// in copies only (what is rewritten may be a shared cache entry).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ownerOfUiUri,
  publicUiUri,
  showToolUi,
  showUiContents,
  showUiItem,
  showUiResource,
} from '../../protocol/ui-uris.js';

const HEADS: [string, string][] = [
  ['a', 'a__'],
  ['ab', 'ab--'],
];

test('a ui:// URI gets the head after its scheme and is read back to its owner and own URI; others pass', () => {
  assert.equal(publicUiUri('a__', 'ui://dashboard/view.html'), 'ui://a__dashboard/view.html');
  assert.equal(publicUiUri('a__', 'UI://x'), 'UI://a__x', 'the scheme is matched in any case and kept as given');
  assert.equal(publicUiUri('a__', 'file:///x'), 'file:///x');
  assert.deepEqual(ownerOfUiUri('ui://a__dashboard/view.html', HEADS), {
    server: 'a',
    uri: 'ui://dashboard/view.html',
  });
  assert.deepEqual(ownerOfUiUri('ui://ab--x', HEADS), { server: 'ab', uri: 'ui://x' });
  assert.equal(ownerOfUiUri('ui://nobody__x', HEADS), undefined);
  assert.equal(ownerOfUiUri('ui://dashboard', HEADS), undefined);
  assert.equal(ownerOfUiUri('file://a__x', HEADS), undefined);
});

test("a tool's UI resource is namespaced in both keys, in a copy; a tool without one is the same object", () => {
  const tool = {
    name: 't',
    _meta: { ui: { resourceUri: 'ui://v', visibility: ['app'] }, 'ui/resourceUri': 'ui://v', other: 1 },
  };
  const before = structuredClone(tool);
  const shown = showToolUi('a__', tool);
  assert.deepEqual(shown, {
    name: 't',
    _meta: { ui: { resourceUri: 'ui://a__v', visibility: ['app'] }, 'ui/resourceUri': 'ui://a__v', other: 1 },
  });
  assert.deepEqual(tool, before, 'the original is untouched');
  const plain = { name: 'p', _meta: { ui: { visibility: ['model'] } } };
  assert.equal(showToolUi('a__', plain), plain);
  const legacyOnly = showToolUi('a__', { name: 'l', _meta: { 'ui/resourceUri': 'ui://v' } });
  assert.deepEqual(legacyOnly._meta, { 'ui/resourceUri': 'ui://a__v' });
});

test('list items and read contents: ui:// ones namespaced in copies, others untouched', () => {
  assert.deepEqual(showUiResource('a__', { uri: 'ui://v', name: 'v' }), { uri: 'ui://a__v', name: 'v' });
  assert.deepEqual(showUiResource('a__', { uriTemplate: 'ui://p/{x}', name: 'p' }), {
    uriTemplate: 'ui://a__p/{x}',
    name: 'p',
  });
  const other = { uri: 'file:///v', name: 'f' };
  assert.equal(showUiResource('a__', other), other);
  const result = {
    contents: [
      { uri: 'ui://v', text: 'h' },
      { uri: 'file:///x', text: 'f' },
    ],
  };
  assert.deepEqual(showUiContents('a__', result), {
    contents: [
      { uri: 'ui://a__v', text: 'h' },
      { uri: 'file:///x', text: 'f' },
    ],
  });
  assert.equal(result.contents[0]!.uri, 'ui://v');
  const plain = { contents: [{ uri: 'file:///x', text: 'f' }] };
  assert.equal(showUiContents('a__', plain), plain);
});

test(
  'an item of a list by its method: ' + 'tools by their _meta, resources and templates by their URI, prompts untouched',
  () => {
    assert.deepEqual(showUiItem('tools/list', 'a__', { name: 't', _meta: { ui: { resourceUri: 'ui://v' } } }), {
      name: 't',
      _meta: { ui: { resourceUri: 'ui://a__v' } },
    });
    assert.deepEqual(showUiItem('resources/list', 'a__', { uri: 'ui://v' }), { uri: 'ui://a__v' });
    assert.deepEqual(showUiItem('resources/templates/list', 'a__', { uriTemplate: 'ui://p/{x}' }), {
      uriTemplate: 'ui://a__p/{x}',
    });
    const prompt = { name: 'p', _meta: { ui: { resourceUri: 'ui://v' } } };
    assert.equal(showUiItem('prompts/list', 'a__', prompt), prompt);
    assert.equal(showUiItem('tools/list', 'a__', 'not an object'), 'not an object');
  },
);
