// A rolling restart as a replica lives it: on close (SIGTERM), /readyz says "draining" for listen.drainDelayMs
// while calls are still answered; then the listener stops accepting, idle keep-alive connections close, and a
// call in flight finishes with `Connection: close` on its answer.
import assert from 'node:assert/strict';
import http from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { eventually, fixture, headersFor, request, startTestGateway } from './harness.js';

const DRAIN_DELAY_MS = 1500;

interface Answer {
  status: number;
  connection: string | undefined;
  localPort: number | undefined;
  body: any;
}

/** One request on `agent` (a keep-alive agent with one socket: every request shares one connection). */
function send(
  agent: http.Agent,
  url: string,
  body?: { method: string; params?: Record<string, unknown> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { agent, method: body ? 'POST' : 'GET', headers: body ? headersFor(body) : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            connection: res.headers.connection,
            localPort: res.socket?.localPort,
            body: JSON.parse(text),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** Whether a new TCP connection to the gateway is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

test(
  'close(): "draining" on /readyz while calls are served, then no new connections, idle ones closed, the last ' +
    'answer says Connection: close',
  async () => {
    const gateway = await startTestGateway(
      { a: fixture('modern-server') },
      { drainDelayMs: DRAIN_DELAY_MS, drainMs: 10_000 },
    );
    const endpoint = `${gateway.url}/servers/a/mcp`;
    const client = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const idle = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const call = (text: string) => request('tools/call', { name: 'echo', arguments: { text } });
    await eventually(async () => (await send(client, `${gateway.url}/readyz`)).status === 200, 20_000);
    const before = await send(client, endpoint, call('before'));
    assert.equal(before.body.result.content[0].text, 'before');
    // A second client whose connection will sit idle through the drain.
    const idleAnswer = await send(idle, `${gateway.url}/healthz`);
    const idleSocketClosed = new Promise<void>((resolve) => {
      for (const sockets of Object.values(idle.freeSockets))
        for (const socket of sockets ?? []) socket.once('close', () => resolve());
    });
    assert.equal(idleAnswer.status, 200);

    const closing = gateway.close();
    let closed = false;
    void closing.then(() => (closed = true));

    const readyz = await send(client, `${gateway.url}/readyz`);
    assert.equal(readyz.status, 503);
    assert.equal(readyz.body.status, 'draining');
    const during = await send(client, endpoint, call('during the delay'));
    assert.equal(during.status, 200);
    assert.equal(during.body.result.content[0].text, 'during the delay');
    assert.equal(during.connection, 'keep-alive', 'during the delay connections are kept');
    assert.equal(during.localPort, before.localPort, 'the same connection serves the client throughout');
    assert.equal(await refused(gateway.url), false, 'new connections are accepted during the delay');

    // A call that is still running when the delay ends.
    const slow = send(
      client,
      endpoint,
      request('tools/call', { name: 'slow', arguments: { ms: DRAIN_DELAY_MS + 3000 } }),
    );
    let slowDone = false;
    void slow.then(() => (slowDone = true));

    await eventually(() => refused(gateway.url), DRAIN_DELAY_MS + 2000);
    await idleSocketClosed; // the idle keep-alive connection was closed by the gateway
    assert.equal(
      slowDone,
      false,
      'the slow call must still be in flight once the listener has closed (raise its ms if not)',
    );
    assert.equal(closed, false, 'close() waits for the call in flight');

    const last = await slow;
    assert.equal(last.status, 200);
    assert.equal(last.body.result.content[0].text, 'done');
    assert.equal(last.connection, 'close', 'the answer in flight ends its keep-alive connection');
    await closing;
    client.destroy();
    idle.destroy();
  },
);
