// A route that wrote its own answer (a 2025 GET stream) hands @hono/node-server the "already sent" marker, and
// the adapter must leave the response alone. When another listener of the adapter in the same process had
// replaced the global Response first (an SDK MCP server, a test's upstream), the adapter's marker was one of
// its lighter Responses, written out as a second head: ERR_HTTP_HEADERS_SENT, and the stream cut with
// "Error: …" in it. A real server: the stream's text is what the client reads.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { honoAnswer, RESPONSE_ALREADY_SENT } from '../../src/edge/answered.js';

// Another adapter listener first: the global Response is the adapter's lighter one from here on.
getRequestListener(() => new Response('elsewhere'));

const app = new Hono<{ Bindings: HttpBindings }>();
app.get('/stream', async (c) => {
  const outgoing = c.env.outgoing;
  outgoing.writeHead(200, { 'content-type': 'text/plain' });
  outgoing.write('first;');
  const answer = await honoAnswer(RESPONSE_ALREADY_SENT);
  // The route's stream goes on after the adapter has taken the marker back (a turn later, as a stream does).
  setTimeout(() => outgoing.end('second'), 20);
  return answer;
});
const server: Server = createServer(getRequestListener(app.fetch));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test("a route's own streamed answer is left alone by the adapter, whoever replaced the global Response", async () => {
  const { port } = server.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/stream`);
  assert.equal(response.status, 200);
  assert.equal(await response.text(), 'first;second');
});
