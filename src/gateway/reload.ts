// Applying a new config to a running gateway: security and profiles are swapped whole, only servers whose settings
// changed restart (the others keep serving, untouched), and sections that need a restart keep their
// running values (and are reported again on the next reload).
import { loadSandbox } from '../../bridge/sandbox/index.js';
import type { Upstream } from '../../bridge/upstream.js';
import type { GatewayConfig, ServerConfig } from '../config/index.js';
import type { ServedUpstream } from '../layers/index.js';
import { EVERY_LIST } from '../notify/index.js';
import type { GatewayParts } from './running.js';

const NEED_RESTART = ['listen', 'log', 'aggregate', 'cache', 'mrtr', 'legacyClients', 'telemetry'] as const;
/** Listen streams were opened under these rules. */
const SECURITY = ['auth', 'policies', 'rateLimit'] as const;

interface ServerChanges {
  added: string[];
  changed: [string, ServedUpstream][];
  removed: [string, ServedUpstream][];
}

/** Returns the sections that changed but need a restart. Throws, changing nothing, when security cannot be built. */
export async function reloadGateway(parts: GatewayParts, next: GatewayConfig): Promise<string[]> {
  const running = parts.config.current;
  const needRestart = NEED_RESTART.filter((key) => differs(next, running, key));
  const changes = diffServers(parts, next);
  // May throw (a sandbox this host cannot give): then nothing has changed yet.
  await refuseUnsandboxable(next, changes);
  // May throw (an OpenAPI document that does not load): then nothing has changed yet.
  const starting = [...changes.added, ...changes.changed.map(([name]) => name)];
  const prepared = await parts.servers.prepare(
    starting.map((name) => [name, next.servers[name]!] as [string, ServerConfig]),
    next.envReads,
  );
  // May throw (a key file that cannot be read): then nothing has changed yet, and what was prepared is closed.
  await parts.security.install(next).catch(async (error: unknown) => {
    await Promise.all([...prepared.values()].map((upstream) => upstream.close().catch(() => {})));
    throw error;
  });
  await swapServers(parts, next, changes, prepared);
  // A server whose settings stayed may still have a changed document: it says so with list_changed, and listen
  // streams stay open.
  const restarted = new Set([...changes.added, ...changes.changed.map(([name]) => name)]);
  await parts.servers.reread(Object.keys(next.servers).filter((name) => !restarted.has(name)));
  const profilesChanged = parts.profiles.install(next);
  parts.search.serversChanged();
  // Listen streams were opened under the old servers, rules and profiles: end them, and clients listen again under the
  // new.
  const securityChanged = SECURITY.some((key) => differs(next, running, key));
  if (securityChanged || profilesChanged || changes.removed.length || changes.changed.length)
    parts.listenHub.closeAll();
  logChanges(parts, changes);
  parts.config.current = {
    ...next,
    listen: running.listen,
    log: running.log,
    aggregate: running.aggregate,
    cache: running.cache,
    mrtr: running.mrtr,
    legacyClients: running.legacyClients,
    telemetry: running.telemetry,
  };
  parts.config.reloads++;
  parts.config.appliedAt = Date.now();
  return needRestart;
}

/** A server whose sandbox this host cannot give would fail halfway through the swap: refuse the reload first. */
async function refuseUnsandboxable(next: GatewayConfig, { added, changed }: ServerChanges): Promise<void> {
  const starting = [...added, ...changed.map(([name]) => name)];
  const boxed = starting.flatMap((name) => {
    const policy = next.servers[name]!.sandboxPolicy;
    return policy ? [[name, policy] as const] : [];
  });
  if (!boxed.length) return;
  const { SandboxRefused, sandboxProblems } = await loadSandbox();
  const problems = (await Promise.all(boxed.map(([name, policy]) => sandboxProblems(name, policy)))).flat();
  if (problems.length) throw new SandboxRefused(problems);
}

function differs(next: GatewayConfig, running: GatewayConfig, key: keyof GatewayConfig): boolean {
  return JSON.stringify(next[key]) !== JSON.stringify(running[key]);
}

function diffServers({ servers }: GatewayParts, next: GatewayConfig): ServerChanges {
  const changes: ServerChanges = { added: [], changed: [], removed: [] };
  for (const [name, server] of Object.entries(next.servers)) {
    if (servers.runsAs(name, server)) continue;
    const old = servers.upstreams.get(name);
    if (old) changes.changed.push([name, old]);
    else changes.added.push(name);
  }
  for (const [name, served] of servers.upstreams) if (!(name in next.servers)) changes.removed.push([name, served]);
  return changes;
}

/** New requests find the new servers at once; the replaced and removed ones finish what they have, then stop. */
async function swapServers(
  { servers, aggregate, cache, config }: GatewayParts,
  next: GatewayConfig,
  { added, changed, removed }: ServerChanges,
  prepared: ReadonlyMap<string, Upstream>,
): Promise<void> {
  const outgoing = [...removed, ...changed];
  // Their watches, taken before new ones take their place.
  const oldWatches = new Map(outgoing.map(([name]) => [name, servers.watchOf(name)] as const));
  for (const [name] of removed) {
    servers.remove(name);
    aggregate.detach(name);
  }
  for (const name of [...added, ...changed.map(([n]) => n)]) {
    const served = await servers.add(name, next.servers[name]!, next.envReads, prepared.get(name));
    aggregate.attach(name, served);
    void served.start();
  }
  servers.reorder(Object.keys(next.servers));
  for (const [name] of outgoing) void cache.invalidate(name, EVERY_LIST);
  aggregate.listsChanged();
  for (const [name, served] of outgoing)
    void servers.retire(name, served, oldWatches.get(name), config.current.listen.drainMs);
}

function logChanges({ log }: GatewayParts, { added, changed, removed }: ServerChanges): void {
  if (added.length || changed.length || removed.length) {
    log.info({ added, changed: changed.map(([n]) => n), removed: removed.map(([n]) => n) }, 'servers reloaded');
  }
}
