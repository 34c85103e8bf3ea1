// `perCaller: true` on a stdio server: each principal gets a child (or an `instances` pool) of their own,
// started on their first call and stopped after `idleMs` without one. At most `maxCallers` run at once,
// counting children still stopping: a newcomer's slot is reserved before anything awaits, and its child
// starts only once the one it replaces has exited. A newcomer beyond that takes the place of the least
// recently used idle child, and when every child is busy it is refused with a 503 that names the setting.
// This layer is the server's transport as the stack sees it: it picks which child a request goes to by
// RequestOptions.caller, and the children (bridge/) never learn who that is. A child's answers are its
// caller's only: they are made `cacheScope: "private"` here, whatever the child claimed (docs/design.md lists
// this rewrite).
import { EventEmitter } from 'node:events';
import type {
  CallerIdentity,
  ChildStatus,
  RequestOptions,
  Upstream,
  UpstreamStatus,
} from '../../../bridge/upstream.js';
import type { Log } from '../../../infra/log.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../protocol/jsonrpc.js';
import { overloadedResponse } from '../../../protocol/overload.js';

export interface PerCallerSettings {
  /** A child with no call for this long is stopped. */
  idleMs: number;
  /** Children (one per principal) that may run at once. */
  maxCallers: number;
}

/**
 * What a caller's child is started with: its environment beyond the server's own, or an answer instead (connect first).
 */
export type Admission =
  | { env: Readonly<Record<string, string>>; version?: number }
  | { answer: (id: JsonRpcId) => JsonRpcResponse };

/** Says what a caller's child needs before it starts (per-caller secrets); absent: nothing more than the config. */
export interface ChildEnvSource {
  admit(caller: CallerIdentity, message: JsonRpcRequest): Promise<Admission>;
  /**
   * Which version of the caller's values is current, from memory: a child started with another (the secret
   * was pasted again, or revoked: null) is replaced. undefined: not known here, keep the child.
   */
  version?(principal: string): number | null | undefined;
  /** Hears of a caller whose values may be gone (undefined: any caller; recheck each). */
  onGone?(listener: GoneListener): void;
  /**
   * Reads the caller's values again from the store (not this process's copy), so `version` knows them: a
   * change heard from another replica dropped the copy, and a child kept until its caller's next call would
   * outlive a revocation made elsewhere.
   */
  reread?(principal: string): Promise<unknown>;
}

/**
 * `principal`: a call found that caller's values gone. undefined: some record of the server changed (here or on
 * another replica), each child is rechecked; `isFor`, when known, says whose it was (those are read again).
 */
export type GoneListener = (principal: string | undefined, isFor?: (principal: string) => boolean) => void;

/** Makes one caller's upstream (a child or a pool) with `env` added to the server's own environment. */
export type SpawnChild = (env: Readonly<Record<string, string>>) => Upstream;

/** One principal's child, and how busy it is. */
class CallerChild {
  inFlight = 0;
  lastUsed = Date.now();
  /**
   * Admitted, and its caller's call not on it yet (a few microtasks): not idle, so no newcomer retires it in
   * that moment (the call would meet a stopped child).
   */
  fresh = true;
  /** Its process was started (it had waited for room until then). */
  launched = false;
  idleTimer: NodeJS.Timeout | undefined = undefined;
  /** No longer the caller's (secret revoked): stopped once its last call is answered. */
  forgotten = false;
  /** Settles once the child's process was started (after the slot it takes was free); calls wait for it. */
  started: Promise<void> = Promise.resolve();
  /** Set while a forgotten child still answers calls: its last answer lets it stop. */
  drained: (() => void) | undefined = undefined;

  constructor(
    readonly upstream: Upstream,
    readonly version: number | undefined,
  ) {}
}

const NOTHING_MORE: Admission = { env: {} };

export class PerCallerUpstream implements Upstream {
  readonly events = new EventEmitter();
  private readonly children = new Map<string, CallerChild>();
  /** Principals whose child is being admitted (its secret read): a second call waits for the same one. */
  private readonly admitting = new Map<string, Promise<CallerChild | JsonRpcResponse>>();
  private stopped = true;
  /** Children stopped for being idle or to make room, since the start (for the log and tests). */
  private retired = 0;
  /**
   * Children let go but not exited yet (closing, or a forgotten one finishing its calls): they still hold a
   * process, so they count against maxCallers until they settle.
   */
  private readonly stopping = new Set<Promise<void>>();

  constructor(
    readonly name: string,
    private readonly spawn: SpawnChild,
    private readonly settings: PerCallerSettings,
    private readonly log: Log,
    private readonly envSource?: ChildEnvSource,
  ) {
    envSource?.onGone?.((principal, isFor) => {
      if (principal !== undefined) return this.forget(principal);
      for (const known of [...this.children.keys()]) {
        if (isFor?.(known) && envSource.reread) this.recheckStored(envSource, known);
        else this.current(known);
      }
    });
  }

  /** The caller's values read again from the store, then their child kept or let go (revoked on any replica). */
  private recheckStored(source: ChildEnvSource, principal: string): void {
    source.reread!(principal).then(
      () => this.current(principal),
      // The store is unreachable: the caller's next call reads it again (SecretGate's `before`).
      (error: unknown) =>
        this.log.warn({ err: (error as Error).message }, "a caller's values could not be read again after a change"),
    );
  }

  async request(message: JsonRpcRequest, options: RequestOptions = {}): Promise<JsonRpcResponse> {
    const caller = options.caller;
    if (caller === undefined) {
      return errorResponse(
        message.id,
        ErrorCode.InternalError,
        `servers.${this.name} runs a child per caller (perCaller), and this request came with no caller to run it for`,
        {
          server: this.name,
        },
      );
    }
    if (this.stopped)
      return errorResponse(
        message.id,
        ErrorCode.InternalError,
        `Upstream '${this.name}' is stopped (the gateway is shutting down or reloading)`,
      );
    const found = this.current(caller.principal) ?? (await this.childFor(caller, message));
    if (!(found instanceof CallerChild)) return found;
    return this.send(found, message, options);
  }

  private async send(child: CallerChild, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    this.busy(child);
    try {
      await child.started;
      // Let go while it waited for room (its caller's values changed): it never ran; a child of theirs now will.
      if (child.forgotten && !child.launched) return await this.request(message, options);
      const response = await child.upstream.request(message, options);
      keepPrivate(response);
      return response;
    } finally {
      this.done(child);
    }
  }

  /** The caller's running child, unless their values changed since it started (then it is let go). */
  private current(principal: string): CallerChild | undefined {
    const child = this.children.get(principal);
    if (child === undefined || this.envSource?.version === undefined) return child;
    const version = this.envSource.version(principal);
    if (version === undefined || version === child.version) return child;
    this.forget(principal);
    return undefined;
  }

  /** The caller's child, started now; or the answer they get instead (connect first, or no room). */
  private childFor(caller: CallerIdentity, message: JsonRpcRequest): Promise<CallerChild | JsonRpcResponse> {
    const principal = caller.principal;
    const pending = this.admitting.get(principal);
    if (pending)
      return pending.then((found) => (found instanceof CallerChild ? found : this.childFor(caller, message)));
    const admitted = this.admit(caller, message).finally(() => this.admitting.delete(principal));
    this.admitting.set(principal, admitted);
    return admitted;
  }

  private async admit(caller: CallerIdentity, message: JsonRpcRequest): Promise<CallerChild | JsonRpcResponse> {
    const admission = this.envSource ? await this.envSource.admit(caller, message) : NOTHING_MORE;
    if ('answer' in admission) return admission.answer(message.id);
    const existing = this.current(caller.principal);
    if (existing) return existing;
    if (this.children.size >= this.settings.maxCallers && !this.makeRoom()) return this.full(message.id);
    // The slot is the caller's from here (no await before this line): concurrent newcomers see it taken.
    const child = new CallerChild(this.spawn(admission.env), admission.version);
    this.children.set(caller.principal, child);
    child.started = this.roomFreed().then(() => {
      if (this.stopped || this.children.get(caller.principal) !== child) return;
      child.launched = true;
      void child.upstream.start();
      this.log.info({ children: this.children.size }, 'started a child for a new caller');
    });
    return child;
  }

  /** Settles once the children kept and those still stopping fit in maxCallers (at once when none stops). */
  private async roomFreed(): Promise<void> {
    while (this.stopping.size > 0 && this.children.size + this.stopping.size > this.settings.maxCallers)
      await Promise.race(this.stopping);
  }

  /** Closes a child's process, holding its slot until it has exited. */
  private stopChild(child: CallerChild, whenIdle: Promise<void> = Promise.resolve()): void {
    const stopped: Promise<void> = whenIdle
      .then(() => child.upstream.close())
      .catch((error: Error) => this.log.warn({ err: error.message }, "could not stop a caller's child"))
      .finally(() => this.stopping.delete(stopped));
    this.stopping.add(stopped);
  }

  /** Stops the least recently used idle child; false when every child is busy. */
  private makeRoom(): boolean {
    let oldest: [string, CallerChild] | undefined;
    for (const entry of this.children) {
      if (
        entry[1].inFlight === 0 &&
        !entry[1].fresh &&
        (oldest === undefined || entry[1].lastUsed < oldest[1].lastUsed)
      )
        oldest = entry;
    }
    if (oldest === undefined) return false;
    this.retire(oldest[0], oldest[1], 'to make room for a new caller (maxCallers)');
    return true;
  }

  private full(id: JsonRpcId): JsonRpcResponse {
    const { maxCallers } = this.settings;
    return overloadedResponse(
      id,
      `${this.name} runs a child per caller and all ${maxCallers} are busy (servers.${this.name}.maxCallers); retry ` +
        `later, or raise servers.${this.name}.maxCallers`,
      { server: this.name, reason: 'callers_full', setting: `servers.${this.name}.maxCallers` },
      1,
    );
  }

  private busy(child: CallerChild): void {
    child.fresh = false;
    child.inFlight++;
    child.lastUsed = Date.now();
    if (child.idleTimer !== undefined) {
      clearTimeout(child.idleTimer);
      child.idleTimer = undefined;
    }
  }

  private done(child: CallerChild): void {
    child.lastUsed = Date.now();
    if (--child.inFlight > 0) return;
    if (child.forgotten) {
      child.drained?.();
      return;
    }
    child.idleTimer = setTimeout(() => {
      for (const [principal, running] of this.children)
        if (running === child)
          this.retire(principal, child, `after ${this.settings.idleMs} ms without a call (idleMs)`);
    }, this.settings.idleMs);
    child.idleTimer.unref();
  }

  private retire(principal: string, child: CallerChild, why: string): void {
    if (child.idleTimer !== undefined) clearTimeout(child.idleTimer);
    this.children.delete(principal);
    this.retired++;
    this.log.info({ children: this.children.size }, `stopped a caller's child ${why}`);
    this.stopChild(child);
  }

  /** Forgets one caller's child (a revoked secret): it is stopped once its calls are answered. */
  forget(principal: string): void {
    const child = this.children.get(principal);
    if (child === undefined) return;
    this.children.delete(principal);
    if (child.idleTimer !== undefined) clearTimeout(child.idleTimer);
    child.forgotten = true;
    // One still waiting for room has no process to stop: waiting on its calls, which wait for room, would hold
    // that room for ever. Its calls go to the caller's next child (send).
    const drained = child.inFlight === 0 || !child.launched;
    this.stopChild(child, drained ? undefined : new Promise((resolve) => (child.drained = resolve)));
    this.retired++;
  }

  /** Children running now and stopped since the start; never who they run for. */
  counts(): { running: number; retired: number } {
    return { running: this.children.size, retired: this.retired };
  }

  /**
   * Ready while the gateway serves it (children start on demand); each running child's status, in no
   * particular order and without its caller, so health, metrics and the status page count children only.
   */
  status(): UpstreamStatus {
    const children: ChildStatus[] = [];
    for (const child of this.children.values()) {
      const status = child.upstream.status();
      if (status.children) children.push(...status.children);
      else children.push({ ...status, inFlight: child.inFlight });
    }
    let restarts = 0;
    for (const child of children) restarts += child.restarts;
    return {
      state: this.stopped ? 'stopped' : 'ready',
      era: children.find((child) => child.era !== undefined)?.era,
      restarts,
      lastError: undefined,
      children,
    };
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.events.emit('state', 'ready');
  }

  async close(): Promise<void> {
    this.stopped = true;
    const running = [...this.children.values()];
    this.children.clear();
    for (const child of running) if (child.idleTimer !== undefined) clearTimeout(child.idleTimer);
    await Promise.all([...running.map((child) => child.upstream.close()), ...this.stopping]);
    this.events.emit('state', 'stopped');
  }
}

function keepPrivate(response: JsonRpcResponse): void {
  if ('result' in response && isObject(response.result) && response.result.cacheScope === 'public')
    response.result.cacheScope = 'private';
}
