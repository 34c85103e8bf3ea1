// The start-up lines about per-user credentials (issue 46 items 6 and 7): the redirect URIs to register and
// the store in use, and a warning naming the cause when a gateway set up for replicas keeps them in a file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { announceCredentials } from '../../src/gateway/credential-notes.js';
import { recordingLog } from '../recording-log.js';
import { BASE } from '../config-problems.js';

const KEY = 'a-test-credentials-key-of-32-bytes-or-more';
const crm = { url: 'https://crm.example.com/mcp', credentials: { type: 'oauth', clientId: 'gw' } };

function announced(raw: Record<string, unknown>) {
  const recorded = recordingLog();
  announceCredentials(parseConfig(raw, 'test.yaml', BASE, {}), recorded.log);
  return recorded;
}

test('the start-up log names the callback URL to register and the store in use', () => {
  const { lines, warnings } = announced({
    listen: { publicUrl: 'https://gw.example.com' },
    credentials: { key: KEY, store: 'file', file: './c.json' },
    servers: { crm },
  });
  const line = lines.find((l) => l.level === 'info' && l.msg.includes('per-user credentials'));
  assert.ok(line, JSON.stringify(lines));
  assert.deepEqual(line.obj.redirectUris, ['https://gw.example.com/connect/callback']);
  assert.equal(line.obj.store, 'file');
  assert.match(line.msg, /register https:\/\/gw\.example\.com\/connect\/callback as redirect URI/);
  assert.deepEqual(warnings(), [], 'one gateway with a file store: nothing to warn of');
});

test('set up for replicas (cache.store redis) with a file credential store: a warning naming the cause', () => {
  const { warnings, lines } = announced({
    listen: { publicUrl: 'https://gw.example.com' },
    cache: { store: 'redis', url: 'redis://127.0.0.1:6379' },
    credentials: { key: KEY, store: 'file', file: './c.json' },
    servers: { crm },
  });
  const [warning] = warnings();
  assert.ok(warning, JSON.stringify(lines));
  assert.match(warning, /credentials\.store is file/);
  assert.match(warning, /a link made on one and opened on another is refused/);
  assert.match(warning, /Set credentials\.store: redis/);
  const shared = announced({
    listen: { publicUrl: 'https://gw.example.com' },
    cache: { store: 'redis', url: 'redis://127.0.0.1:6379' },
    credentials: { key: KEY, store: 'redis' },
    servers: { crm },
  });
  assert.deepEqual(shared.warnings(), [], 'the control: a redis store is shared');
  assert.ok(shared.lines.some((l) => l.obj.store === 'redis'));
});

test('without per-user servers, nothing is said', () => {
  const { lines } = announced({ servers: { local: { command: 'node', args: ['x.js'] } } });
  assert.deepEqual(lines, []);
});
