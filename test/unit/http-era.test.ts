import { test } from 'node:test';
import assert from 'node:assert/strict';
import { looksLegacy, looksModern, probeVerdict } from '../../bridge/http/http-era.js';
import type { HttpExchange } from '../../bridge/http/http-exchange.js';

const ex = (fields: Partial<HttpExchange>) => fields as HttpExchange;
const unsupported = {
  code: -32022,
  message: 'Unsupported protocol version',
  data: { supported: ['2026-07-28'], requested: '2026-07-28' },
};

test('a DiscoverResult or a modern error, also in a 400 body, means modern', () => {
  assert.equal(
    probeVerdict(
      ex({
        end: 'response',
        status: 200,
        response: { jsonrpc: '2.0', id: 0, result: { supportedVersions: ['2026-07-28'] } },
      }),
    ),
    'modern',
  );
  assert.equal(
    probeVerdict(ex({ end: 'response', status: 200, response: { jsonrpc: '2.0', id: 0, error: unsupported } })),
    'modern',
  );
  assert.equal(
    probeVerdict(ex({ end: 'status', status: 400, body: { jsonrpc: '2.0', id: 0, error: unsupported } })),
    'modern',
  );
  assert.equal(
    probeVerdict(
      ex({ end: 'status', status: 400, body: { jsonrpc: '2.0', error: { code: -32020, message: 'Header mismatch' } } }),
    ),
    'modern',
  );
});

test('anything else a server answers means legacy', () => {
  assert.equal(probeVerdict(ex({ end: 'status', status: 404, body: undefined })), 'legacy');
  assert.equal(probeVerdict(ex({ end: 'status', status: 405, body: 'Method Not Allowed' })), 'legacy');
  assert.equal(
    probeVerdict(
      ex({
        end: 'status',
        status: 400,
        body: { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: No valid session ID provided' } },
      }),
    ),
    'legacy',
  );
  assert.equal(
    probeVerdict(ex({ end: 'status', status: 400, body: { error: { code: -32022, message: 'no data.supported' } } })),
    'legacy',
  );
  assert.equal(
    probeVerdict(
      ex({
        end: 'response',
        status: 200,
        response: { jsonrpc: '2.0', id: 0, error: { code: -32601, message: 'Method not found' } },
      }),
    ),
    'legacy',
  );
  assert.equal(probeVerdict(ex({ end: 'unreadable', status: 200, body: '<html>' })), 'legacy');
  assert.equal(probeVerdict(ex({ end: 'empty', status: 202 })), 'legacy');
});

test('auth failures, server errors and no answer at all give no verdict', () => {
  for (const status of [401, 403, 500, 502, 503])
    assert.equal(probeVerdict(ex({ end: 'status', status })), 'no-verdict', String(status));
  for (const end of ['network', 'timeout', 'too-large'] as const)
    assert.equal(probeVerdict(ex({ end, status: 0 })), 'no-verdict', end);
});

test('looksLegacy / looksModern: refusals typical of the other era', () => {
  assert.equal(looksLegacy(ex({ end: 'status', status: 405 })), true);
  assert.equal(
    looksLegacy(
      ex({ end: 'status', status: 400, body: { error: { code: -32000, message: 'Server not initialized' } } }),
    ),
    true,
  );
  assert.equal(looksLegacy(ex({ end: 'status', status: 404, body: 'Not Found' })), true);
  assert.equal(
    looksLegacy(ex({ end: 'status', status: 404, body: { error: { code: -32601, message: 'Method not found' } } })),
    false,
  );
  assert.equal(looksLegacy(ex({ end: 'status', status: 400, body: { error: unsupported } })), false);
  assert.equal(looksLegacy(ex({ end: 'status', status: 500 })), false);
  assert.equal(looksModern(ex({ end: 'status', status: 400, body: { error: unsupported } })), true);
  assert.equal(looksModern(ex({ end: 'status', status: 400, body: { error: { code: -32602, message: 'x' } } })), false);
});
