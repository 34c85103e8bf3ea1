// Builds a `perCaller: true` server's transport: a PerCallerUpstream whose children are made as the
// server's config says (one child, or an `instances` pool of them), each with its caller's extra env.
import { PooledUpstream } from '../../../bridge/pool/index.js';
import { StdioUpstream, type StdioUpstreamConfig } from '../../../bridge/stdio/index.js';
import type { Upstream } from '../../../bridge/upstream.js';
import type { Log } from '../../../infra/log.js';
import { type ChildEnvSource, PerCallerUpstream, type PerCallerSettings } from './per-caller-upstream.js';

export function perCallerUpstream(
  config: StdioUpstreamConfig,
  instances: number,
  settings: PerCallerSettings,
  log: Log,
  envSource?: ChildEnvSource,
): PerCallerUpstream {
  const spawn = (extra: Readonly<Record<string, string>>): Upstream => {
    const own = { ...config, env: { ...config.env, ...extra } };
    if (instances === 1) return new StdioUpstream(own, log);
    const children = Array.from(
      { length: instances },
      (_, index) => new StdioUpstream(own, log.child({ child: index })),
    );
    return new PooledUpstream(config.name, children, log);
  };
  log.info(
    { maxCallers: settings.maxCallers, idleMs: settings.idleMs, instances },
    'serving the server as a child per caller',
  );
  return new PerCallerUpstream(config.name, spawn, settings, log, envSource);
}
