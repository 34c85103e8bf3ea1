// /mcp asks a server only for the lists its server/discover offers (issue 36): a tools-only server gets no
// resources/list or prompts/list, so ordinary client traffic counts no upstream errors against it.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { tempDir } from '../temp.js';
import type { RunningGateway } from '../../src/gateway.js';
import { headersFor, post, request, ROOT, startTestGateway, recordingServer } from './harness.js';

const server = (file: string) => ({ command: process.execPath, args: [path.join(ROOT, 'test/fixtures', file)] });
let gateway: RunningGateway;
before(async () => {
  // faulty-server offers tools only; recording-server offers tools, resources and prompts.
  const record = path.join(tempDir('lists-offered'), 'record.log');
  gateway = await startTestGateway({ toolsonly: server('faulty-server.mjs'), everything: recordingServer(record) });
});
after(() => gateway?.close());

const series = (metrics: string, name: string, labels: string) =>
  metrics.split('\n').filter((line) => line.startsWith(name) && line.includes(labels));

test(
  'after server/discover (what a client sends first), /mcp lists skip a server that offers neither resources nor ' +
    'prompts',
  async () => {
    const discover = request('server/discover');
    const offered = await post(`${gateway.url}/mcp`, discover, headersFor(discover));
    assert.ok(offered.body.result.capabilities.resources, 'the merged discover offers resources (one server does)');
    for (const method of ['resources/list', 'resources/templates/list', 'prompts/list', 'resources/list']) {
      const body = request(method);
      const answer = await post(`${gateway.url}/mcp`, body, headersFor(body));
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.ok('result' in answer.body, JSON.stringify(answer.body));
    }
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    for (const method of ['resources/list', 'resources/templates/list', 'prompts/list']) {
      assert.deepEqual(
        series(metrics, 'mcp_gateway_upstream_request_duration_seconds_count', `server="toolsonly",method="${method}"`),
        [],
        `${method} was sent to toolsonly`,
      );
      assert.equal(
        series(metrics, 'mcp_gateway_upstream_request_duration_seconds_count', `server="everything",method="${method}"`)
          .length,
        1,
        `${method} reached the server that offers it`,
      );
    }
    assert.deepEqual(
      series(metrics, 'mcp_gateway_upstream_errors_total', 'server="toolsonly"'),
      [],
      'no upstream errors counted',
    );
  },
);
