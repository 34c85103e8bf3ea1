// HAProxy as the tests' load balancer: started on a config of the test's own (written to `file`), and handed back
// once it answers (`answering`: the front's /readyz, its stats page), with the tail of its log for failure
// messages. A front port another process took meanwhile is PortTaken, so onFreePort can try another.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { PortTaken } from '../ports.js';
import { until } from './harness.js';

export interface Haproxy {
  process: ChildProcess;
  /** The last 4,000 characters it wrote to stderr. */
  log(): string;
}

export async function startHaproxy(
  file: string,
  config: string,
  front: number,
  answering: () => Promise<unknown>,
): Promise<Haproxy> {
  writeFileSync(file, config);
  const haproxy = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  haproxy.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-4000)));
  const answers = await until(
    async () =>
      haproxy.exitCode !== null ||
      (await answering().then(
        () => true,
        () => false,
      )),
    10_000,
    50,
  );
  if (haproxy.exitCode !== null || !answers) {
    haproxy.kill('SIGKILL');
    if (/cannot bind socket/i.test(log)) throw new PortTaken(front, log);
    assert.fail(`HAProxy did not start:\n${log}`);
  }
  return { process: haproxy, log: () => log };
}
