// A gateway in a child process of its own (the built dist/src/cli.js when it matches the sources, as users run
// it: gatewayCli() in test/built.ts), for tests that must see it crash, or measure its memory: SIGUSR2 makes it
// run a full GC and report process.memoryUsage() on stdout. It listens on the port its config names, 0 for one
// the system picks: a preload reports the bound port on stdout, so no test picks a free port and hopes nobody
// takes it before the gateway does.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, until } from './harness.js';
import { gatewayCli } from '../built.js';

export interface ChildGateway {
  base: string;
  child: ChildProcess;
  /** The tail of its stderr, for failure messages. */
  log(): string;
  /** Forces a full GC in the gateway and returns its process.memoryUsage() right after. */
  memory(): Promise<NodeJS.MemoryUsage>;
  stop(): Promise<void>;
}

const PRELOAD = `data:text/javascript,${encodeURIComponent(`
  import net from 'node:net';
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    this.once('listening', () => process.stdout.write(JSON.stringify({ listening: this.address().port }) + '\\n'));
    return listen.apply(this, args);
  };
  process.on('SIGUSR2', () => {
    globalThis.gc(); globalThis.gc(); process.stdout.write(JSON.stringify(process.memoryUsage()) + '\\n'); });
  process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
  process.stdin.resume();
  process.stdin.unref();
`)}`;

/**
 * Starts the gateway on a config file and waits until /readyz says ready. Give the config `listen.port: 0`;
 * pass `port` only when the config names one the test must reuse (a replica restarted behind a proxy).
 */
export async function launchGateway(config: string, port?: number): Promise<ChildGateway> {
  const args = ['--expose-gc', '--import', PRELOAD, ...gatewayCli(), '--config', config];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // stdin is a pipe only so the gateway learns when this test process is gone, however it went (a file
    // that times out is killed): the preload stops the gateway then, instead of leaving it and its children.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const memoryLines: ((usage: NodeJS.MemoryUsage) => void)[] = [];
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    let end: number;
    while ((end = stdout.indexOf('\n')) !== -1) {
      const line = stdout.slice(0, end);
      stdout = stdout.slice(end + 1);
      if (line.startsWith('{"rss"')) memoryLines.shift()?.(JSON.parse(line));
      if (line.startsWith('{"listening"')) bound ??= JSON.parse(line).listening;
    }
  });
  let bound: number | undefined;
  const ready = await until(
    async () => {
      if (child.exitCode !== null) return true;
      if (bound === undefined) return false;
      try {
        return (await fetch(`http://127.0.0.1:${bound}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    60_000,
    100,
  );
  if (!ready || child.exitCode !== null) {
    child.kill('SIGKILL');
    assert.fail(`the gateway did not start:\n${stderr}`);
  }
  if (port !== undefined && bound !== port) {
    child.kill('SIGKILL');
    assert.fail(`the gateway listened on ${bound}, not on ${port} as its config says`);
  }
  const base = `http://127.0.0.1:${bound}`;
  return {
    base,
    child,
    log: () => stderr.slice(-4000),
    memory: () =>
      new Promise<NodeJS.MemoryUsage>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no memory report from the gateway within 10 s')), 10_000);
        memoryLines.push((usage) => {
          clearTimeout(timer);
          resolve(usage);
        });
        child.kill('SIGUSR2');
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
