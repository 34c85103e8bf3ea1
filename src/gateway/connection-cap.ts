// The listener's connection cap, below the process's file-descriptor limit. Every connection costs a
// descriptor, as do the children's pipes, Redis and remote servers' sockets: a process at its limit can
// accept nothing, not even a health probe, and fails every upstream call that needs a new socket. So the
// gateway serves at most listen.maxConnections connections; a few more (PROBE_HEADROOM) are accepted only
// to answer /healthz and /readyz (anything else there gets 503 with Retry-After and the connection is
// closed); beyond those a new connection is closed at once. The descriptor limit is read at start
// (/proc/self/limits, Linux) and a low one is warned about.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Log } from '../../infra/log.js';

/** Connections past the cap that are accepted for probes only. */
export const PROBE_HEADROOM = 32;
/** Below this many descriptors the gateway warns at start. */
export const LOW_FD_LIMIT = 4096;
/** The cap when the descriptor limit cannot be read (not Linux). */
const UNKNOWN_LIMIT_CAP = 10_000;

/** The soft limit on open files of this process, or undefined where /proc/self/limits does not say. */
export function readFdLimit(file = '/proc/self/limits'): number | undefined {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(file, 'utf8'));
    if (!line) return undefined;
    return line[1] === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line[1]);
  } catch {
    return undefined;
  }
}

/**
 * The default listen.maxConnections: the descriptor limit less a quarter of it (at least 128) for
 * everything else the process opens, less the probes' headroom; at least 16.
 */
export function defaultMaxConnections(fdLimit: number | undefined): number {
  if (fdLimit === undefined) return UNKNOWN_LIMIT_CAP;
  const reserve = Math.max(128, Math.floor(fdLimit / 4));
  return Math.max(16, Math.min(fdLimit - reserve - PROBE_HEADROOM, 1_000_000));
}

/** Says at start what the cap is, and warns when the descriptor limit is low or the configured cap is above it. */
export function reportFdLimit(
  fdLimit: number | undefined,
  maxConnections: number,
  configured: boolean,
  log: Log,
): void {
  if (fdLimit === undefined) return;
  if (fdLimit < LOW_FD_LIMIT) {
    log.warn(
      { fdLimit, maxConnections },
      `this process may open only ${fdLimit} files (ulimit -n), so it serves at most ${maxConnections} connections; ` +
        `raise the limit (ulimit -n 65536, LimitNOFILE= under systemd, --ulimit nofile= with Docker) for more`,
    );
  } else if (configured && maxConnections + PROBE_HEADROOM > fdLimit - 64) {
    log.warn(
      { fdLimit, maxConnections },
      `listen.maxConnections (${maxConnections}) is near or above this process's limit of ${fdLimit} open files; ` +
        `lower it or raise the limit`,
    );
  }
}

export class ConnectionCap {
  private open = 0;
  /** Connections accepted past the cap: they may ask for a probe only. */
  private readonly probesOnly = new WeakSet<Socket>();

  constructor(
    server: Server,
    readonly maxConnections: number,
  ) {
    server.on('connection', (socket: Socket) => {
      this.open++;
      socket.once('close', () => this.open--);
      if (this.open <= maxConnections) return;
      if (this.open > maxConnections + PROBE_HEADROOM) socket.destroy();
      else this.probesOnly.add(socket);
    });
  }

  get connections(): number {
    return this.open;
  }

  /** Whether this request came on a connection accepted for probes only; a number compare while under the cap. */
  probesOnlyFor(incoming: IncomingMessage): boolean {
    return this.open > this.maxConnections && this.probesOnly.has(incoming.socket);
  }
}
