// The connect link's two forms (protocol/connect-link.ts): a -32042 error whose data a 2025-11-25 host can read
// (URLElicitationRequiredError: data.elicitations, each an ElicitRequestURLParams) beside the gateway's own `url`
// and `reason`, and the capability check that chooses URL-mode elicitation instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acceptsUrlElicitation, connectRequiredData, type UrlElicitation } from '../../protocol/connect-link.js';
import { META } from '../../protocol/mcp.js';
import { defProblems } from '../schema.js';

const elicitation: UrlElicitation = {
  mode: 'url',
  url: 'https://gw.example/connect/abc123',
  elicitationId: 'abc123',
  message: 'Connect your crm account to continue: open https://gw.example/connect/abc123, then try again.',
};

test("-32042's data: the gateway's url and reason, and the spec's elicitations, each a valid URL elicitation", () => {
  const data = connectRequiredData(elicitation, { server: 'crm' });
  assert.deepEqual(data, {
    server: 'crm',
    url: elicitation.url,
    reason: 'connect_required',
    elicitations: [elicitation],
  });
  for (const each of data.elicitations as unknown[]) assert.deepEqual(defProblems('ElicitRequestURLParams', each), []);
  // What the caller adds cannot take the gateway's fields over.
  assert.equal(connectRequiredData(elicitation, { url: 'https://elsewhere.example/' }).url, elicitation.url);
});

test('URL-mode elicitation only for a request that declared it in its own _meta', () => {
  const request = (capabilities: unknown) => ({
    jsonrpc: '2.0' as const,
    id: 1,
    method: 'tools/call',
    params: { name: 'x', _meta: { [META.clientCapabilities]: capabilities } },
  });
  assert.equal(acceptsUrlElicitation(request({ elicitation: { url: {} } })), true);
  assert.equal(acceptsUrlElicitation(request({ elicitation: { form: {} } })), false);
  assert.equal(acceptsUrlElicitation(request({ elicitation: {} })), false);
  assert.equal(acceptsUrlElicitation(request({})), false);
  assert.equal(acceptsUrlElicitation({ jsonrpc: '2.0', id: 1, method: 'tools/call' }), false);
});
