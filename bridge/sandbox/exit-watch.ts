// What the gateway can see of a refusal inside a sandbox: how each child ended. bwrap writes JSON status
// documents to a descriptor (`--json-status-fd`), the last one `{"exit-code": N}` with 128 + the signal for
// a child the kernel killed. Each sandboxed server gets a FIFO that its children's bwrap writes to; the
// gateway reads it, and an end by SIGSYS (the seccomp filter killed it, seccomp.ts) or SIGXCPU (it used
// `cpuSeconds`) is logged, once per child (a child ends once; a line per end, at the pace supervision
// restarts it), and counted in the metrics. An EPERM answer from the filter and a
// failed allocation under `memoryBytes` end nothing, so neither is seen (docs/sandbox.md).
import { execFileSync } from 'node:child_process';
import { chmodSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Log } from '../../infra/log.js';
import { countRefusal, type RefusalKind } from './refusals.js';

/** The descriptor bwrap writes its status to, opened on the FIFO by the same shell as the seccomp filter. */
export const STATUS_FD = 4;

/** Exit statuses (128 + signal) that name a refusal, and what the log says of each. */
const REFUSED_EXITS: Record<number, { kind: RefusalKind; said: string }> = {
  159: {
    kind: 'syscall',
    said: 'was refused a system call the sandbox forbids (killed by SIGSYS: seccomp)',
  },
  152: {
    kind: 'cpu',
    said: 'used its sandbox.cpuSeconds of processor time (killed by SIGXCPU); raise cpuSeconds if it needs more',
  },
};

export interface ExitWatch {
  /** The FIFO on the host that each child's bwrap writes its status to. */
  fifo: string;
  close(): void;
}

const made: string[] = [];
process.once('exit', () => {
  for (const folder of made) rmSync(folder, { recursive: true, force: true });
});

/** Reads `server`'s children's ends from a FIFO of its own; undefined when no FIFO can be made here. */
export function watchExits(server: string, log: Log): ExitWatch | undefined {
  const folder = mkdtempSync(path.join(tmpdir(), 'mcp-sandbox-exits-'));
  made.push(folder);
  chmodSync(folder, 0o711); // a root gateway's children's bwrap runs as nobody, who must open the FIFO
  const fifo = path.join(folder, 'status');
  try {
    execFileSync('mkfifo', ['-m', '0622', fifo], { stdio: 'ignore' });
  } catch {
    rmSync(folder, { recursive: true, force: true });
    return undefined;
  }
  chmodSync(fifo, 0o622);
  // Read and write: the open does not wait for a writer, and the gateway's own end keeps it from ever ending.
  const stream = new net.Socket({ fd: openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK), readable: true });
  stream.unref();
  stream.on('error', () => {});
  createInterface({ input: stream }).on('line', (line) => {
    const refused = REFUSED_EXITS[exitCode(line) ?? -1];
    if (!refused) return;
    countRefusal(server, refused.kind);
    log.warn({ refused: refused.kind }, `servers.${server}: a sandboxed child ${refused.said}`);
  });
  return {
    fifo,
    close: () => {
      stream.destroy();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

function exitCode(line: string): number | undefined {
  try {
    const status = JSON.parse(line) as { 'exit-code'?: unknown };
    return typeof status['exit-code'] === 'number' ? status['exit-code'] : undefined;
  } catch {
    return undefined;
  }
}
