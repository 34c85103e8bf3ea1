// Servers named like the gateway's own endpoints: "mcp" and "search" are what /mcp and /search/mcp are
// called in metrics (endpoint label), audit lines and 2025 sessions (a session is bound to its endpoint's
// name), so a server of either name would share all three with that endpoint. Refused at load, with the fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';

const load = (name: string) => () =>
  parseConfig({ servers: { [name]: { command: process.execPath } } }, 'test', process.cwd());

test(
  'a server named "search" or "mcp" is refused at load, ' + 'naming the endpoint it would be taken for and the fix',
  () => {
    assert.throws(
      load('search'),
      new RegExp(
        String.raw`servers\.search: "search" is what the gateway's own \/search\/mcp endpoint is called in metrics, ` +
          'audit lines and sessions; give this server another name',
      ),
    );
    assert.throws(
      load('mcp'),
      /servers\.mcp: "mcp" is what the gateway's own \/mcp endpoint is called .*give this server another name/,
    );
  },
);

test('names that merely contain them are fine', () => {
  for (const name of ['search2', 'mcp-tools', 'Search', 'my_mcp']) assert.doesNotThrow(load(name), name);
});
