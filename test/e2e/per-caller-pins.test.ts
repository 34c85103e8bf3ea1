// Routing without a list still applies policy (issue 45 item 3): on a fresh gateway (another replica, or after
// a restart) sharing the pins file, a caller calls a perCaller server's pinned tool on /mcp with no list in
// between. A tool whose definition changed since it was pinned is withheld; the control, a tool still as pinned,
// answers. The rug fixture's `echo` is the tool; the pins file is written as an earlier replica would have.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { toolDigest } from '../../policy/pins.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send } from './harness.js';

const KEY = 'pia-key-0123456789abcdef';
const inputSchema = { type: 'object', properties: { text: { type: 'string' } } };
const started: RunningGateway[] = [];
after(async () => {
  for (const gateway of started) await gateway.close();
});

/** A fresh gateway whose pins file says `rug__echo` was approved with this description. */
async function freshGatewayPinning(description: string): Promise<RunningGateway> {
  const pinsFile = path.join(tempDir('mcp-gw-per-caller-pins-'), 'pins.json');
  writeFileSync(pinsFile, JSON.stringify({ rug__echo: toolDigest({ description, inputSchema }) }));
  const raw = {
    listen: { port: 0 },
    auth: { apiKeys: [{ key: KEY, principal: 'pia' }] },
    pinsFile,
    policies: [{ name: 'pinned', principals: { ids: ['pia'] }, allow: { servers: ['rug'] }, pin: true }],
    servers: {
      rug: {
        command: process.execPath,
        args: [path.join(ROOT, 'test/fixtures/rug-server.mjs')],
        era: 'modern',
        perCaller: true,
      },
    },
  };
  const gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  started.push(gateway);
  return gateway;
}

const echo = (gateway: RunningGateway) =>
  send(`${gateway.url}/mcp`, request('tools/call', { name: 'rug__echo', arguments: { text: 'hi' } }), {
    authorization: `Bearer ${KEY}`,
  });

test('the control: a pinned tool still as approved answers on a fresh gateway with no list first', async () => {
  const answer = await echo(await freshGatewayPinning('Echo text back'));
  assert.equal(answer.body.result?.content?.[0]?.text, 'ECHO(Echo text back): hi', JSON.stringify(answer.body));
});

test('a pinned tool changed since it was approved is withheld on a fresh gateway with no list first', async () => {
  const answer = await echo(await freshGatewayPinning('Echo text back (as reviewed last month)'));
  assert.equal(answer.body.result, undefined, JSON.stringify(answer.body));
  assert.deepEqual(answer.body.error, { code: -32602, message: 'Unknown tool: rug__echo' });
});
