// /healthz and /readyz as load balancers probe them: HAProxy's classic `option httpchk GET /readyz` sends
// HTTP/1.0 with no Host header and reads the status line.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { eventually, fixture, startTestGateway } from './harness.js';

let gateway: RunningGateway;
before(async () => {
  gateway = await startTestGateway({ a: fixture('modern-server') });
  await eventually(async () => (await fetch(`${gateway.url}/readyz`)).status === 200, 20_000);
});
after(() => gateway?.close());

/** Writes `raw` on a fresh TCP connection and returns everything the gateway sends until it closes it. */
function exchange(raw: string): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(raw));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text)).on('error', reject);
  });
}

for (const path of ['/readyz', '/healthz']) {
  test(`GET ${path} HTTP/1.0 without Host answers 200 with its JSON, and closes the connection`, async () => {
    const answer = await exchange(`GET ${path} HTTP/1.0\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.equal(body.status, path === '/readyz' ? 'ready' : 'ok');
  });
}

test(
  "HAProxy's HTTP/1.1 form with a Host header answers too; " + 'HTTP/1.1 without Host stays 400, as RFC 9112 requires',
  async () => {
    assert.match(
      await exchange('GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
      /^HTTP\/1\.1 200 /,
    );
    assert.match(await exchange('GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400 /);
  },
);
