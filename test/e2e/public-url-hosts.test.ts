// listen.publicUrl and Host checking (issue 46 item 5): a loopback listener behind a reverse proxy serves the
// public host it is reached by without listing it in listen.allowedHosts, other hosts are still refused; a
// listener beyond loopback with an https publicUrl checks nothing it did not check before, so a probe sending
// `Host: <pod IP>` still gets /readyz.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { ROOT } from './harness.js';

const started: RunningGateway[] = [];
after(async () => {
  for (const gateway of started) await gateway.close();
});

async function gatewayWith(listen: Record<string, unknown>): Promise<RunningGateway> {
  const raw = {
    listen: { port: 0, ...listen },
    auth: { apiKeys: [{ key: 'probe-key-0123456789abcdef', principal: 'probe' }] },
    servers: {},
  };
  const gateway = await startGateway(parseConfig(raw, 'test', ROOT), silentLog);
  started.push(gateway);
  return gateway;
}

/** GET `path` on the gateway's port at 127.0.0.1 with this Host header; the status. */
function getWithHost(gateway: RunningGateway, path: string, host: string): Promise<number> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

test("a loopback listener serves publicUrl's host (behind a proxy) and still refuses others", async () => {
  const gateway = await gatewayWith({ publicUrl: 'https://gw.example.com' });
  assert.equal(await getWithHost(gateway, '/healthz', 'gw.example.com'), 200);
  assert.equal(await getWithHost(gateway, '/healthz', 'GW.example.com:443'), 200);
  assert.equal(await getWithHost(gateway, '/healthz', '127.0.0.1'), 200, 'the control: loopback names pass');
  assert.notEqual(await getWithHost(gateway, '/healthz', 'evil.example'), 200, 'another host is refused');
});

test('a 0.0.0.0 listener with an https publicUrl: /readyz with Host 10.0.0.5:8080 still answers', async () => {
  const gateway = await gatewayWith({ host: '0.0.0.0', publicUrl: 'https://gw.example.com' });
  assert.equal(await getWithHost(gateway, '/readyz', '10.0.0.5:8080'), 200);
  assert.equal(await getWithHost(gateway, '/healthz', 'gw.example.com'), 200);
});
