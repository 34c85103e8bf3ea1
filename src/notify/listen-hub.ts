// subscriptions/listen on the gateway's endpoints. Every list change the gateway learns of — from its own
// upstreams, or from another replica through the shared cache — arrives here as "these lists of this
// upstream changed" and goes to each open listen stream that opted in to it and watches that upstream.
import type { ServerResponse } from 'node:http';
import { isObject, type JsonObject, type JsonRpcId, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { META } from '../../protocol/mcp.js';
import type { ListKind } from '../profiles/index.js';

const KEEP_ALIVE_MS = 15_000;
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** Which filter flag opts in to the notification that a changed list produces, and the kind of list it is. */
const BY_LIST: Record<string, Announced> = {
  'tools/list': { flag: 'toolsListChanged', method: 'notifications/tools/list_changed', kind: 'tools' },
  'prompts/list': { flag: 'promptsListChanged', method: 'notifications/prompts/list_changed', kind: 'prompts' },
  'resources/list': { flag: 'resourcesListChanged', method: 'notifications/resources/list_changed', kind: 'resources' },
  'resources/templates/list': {
    flag: 'resourcesListChanged',
    method: 'notifications/resources/list_changed',
    kind: 'resources',
  },
};

interface Announced {
  flag: string;
  method: string;
  kind: ListKind;
}
const HONOURED_FLAGS = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'];

interface Listener {
  /** The upstreams it watches; undefined for /mcp (all of them). */
  upstream: string | undefined;
  flags: Set<string>;
  /** Subscribed resource URIs, each with the upstream that owns it. */
  resources: Map<string, string>;
  /** The listen request's id; undefined for a 2025 session's GET stream (its notifications carry no _meta). */
  subscriptionId: JsonRpcId | undefined;
  outgoing: ServerResponse;
  access: ListenAccess | undefined;
  /** Who opened it, for what concerns one caller only (a connection they made); undefined when not told. */
  principal: string | undefined;
}

/** A 2025 session's GET stream: every list change it may hear of, and the resources it subscribes to. */
export interface LegacyStream {
  subscribe(uri: string): boolean;
  unsubscribe(uri: string): void;
}

/**
 * What a policy or a profile lets the listener hear of: upstreams it reaches, lists that show it something, resources
 * it may read.
 */
export interface ListenAccess {
  reaches(upstream: string): boolean;
  /**
   * Whether a change to `upstream`'s lists of this kind may be told (a profile hides some upstreams' tools or prompts).
   */
  hears(upstream: string, kind: ListKind): boolean;
  reads(uri: string, upstream: string): boolean;
}

/** Where resource subscriptions go: who owns a URI, and the upstream subscriptions to keep. */
export interface ResourceSubscriptions {
  /** The upstream that owns `uri` for a listener on `endpoint` (undefined: /mcp), or undefined when none does. */
  owner(uri: string, endpoint: string | undefined): string | undefined;
  add(upstream: string, uri: string): void;
  remove(upstream: string, uri: string): void;
}

export class ListenHub {
  private readonly listeners = new Set<Listener>();

  constructor(private readonly subscriptions?: ResourceSubscriptions) {}

  get size(): number {
    return this.listeners.size;
  }

  /**
   * Lists of `upstream` changed: tell every listener that asked; with `onlyFor`, only the listeners of the
   * principals it accepts (one caller's lists changed: they connected that server or revoked it).
   */
  publish(upstream: string, lists: readonly string[], onlyFor?: (principal: string) => boolean): void {
    if (this.listeners.size === 0) return;
    const announced = new Map<string, Announced>();
    for (const list of lists) {
      const mapped = BY_LIST[list];
      if (mapped) announced.set(mapped.method, mapped);
    }
    for (const listener of this.listeners) {
      const access = listener.access;
      if (listener.upstream !== undefined && listener.upstream !== upstream) continue;
      if (access && !access.reaches(upstream)) continue;
      if (onlyFor && (listener.principal === undefined || !onlyFor(listener.principal))) continue;
      for (const { method, flag, kind } of announced.values()) {
        if (!listener.flags.has(flag) || (access && !access.hears(upstream, kind))) continue;
        send(listener.outgoing, { jsonrpc: '2.0', method, params: tagged(listener, {}) });
      }
    }
  }

  /** A subscribed resource of `upstream` changed. */
  publishResourceUpdated(upstream: string, uri: string): void {
    for (const listener of this.listeners) {
      if (listener.resources.get(uri) !== upstream) continue;
      send(listener.outgoing, {
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: tagged(listener, { uri }),
      });
    }
  }

  /**
   * Turns the response into the listen stream for `request`: the acknowledgement with the honoured subset
   * first, then opted-in notifications, comment keep-alives, until the client closes it.
   */
  open(
    request: JsonRpcRequest,
    outgoing: ServerResponse,
    upstream: string | undefined,
    access?: ListenAccess,
    { principal, honouredElsewhere = {} }: { principal?: string; honouredElsewhere?: JsonObject } = {},
  ): void {
    const asked = isObject(request.params?.notifications) ? request.params.notifications : {};
    // What parts beside the hub honour (task ids: src/tasks/task-listen.ts) is acknowledged with the rest.
    const honoured: JsonObject = { ...honouredElsewhere };
    for (const flag of HONOURED_FLAGS) if (asked[flag] === true) honoured[flag] = true;
    const resources = new Map<string, string>();
    if (Array.isArray(asked.resourceSubscriptions) && this.subscriptions) {
      for (const uri of asked.resourceSubscriptions) {
        const owner = typeof uri === 'string' ? this.subscriptions.owner(uri, upstream) : undefined;
        if (owner === undefined || resources.has(uri) || (access && !access.reads(uri, owner))) continue;
        resources.set(uri, owner);
      }
      // Only URIs some upstream owns (and the caller may read) are honoured; the acknowledgement says which.
      honoured.resourceSubscriptions = [...resources.keys()];
    }
    const listener: Listener = {
      upstream,
      flags: new Set(Object.keys(honoured)),
      resources,
      subscriptionId: request.id,
      outgoing,
      access,
      principal,
    };

    outgoing.writeHead(200, SSE_HEADERS);
    send(outgoing, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: honoured, _meta: { [META.subscriptionId]: request.id } },
    });
    this.listeners.add(listener);
    for (const [uri, owner] of resources) this.subscriptions!.add(owner, uri);
    const keepAlive = setInterval(() => outgoing.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    outgoing.once('close', () => {
      clearInterval(keepAlive);
      if (!this.listeners.delete(listener)) return;
      for (const [uri, owner] of resources) this.subscriptions!.remove(owner, uri);
    });
  }

  /** Opens a 2025 session's GET stream on `outgoing` (headers not yet written). */
  openLegacy(
    outgoing: ServerResponse,
    upstream: string | undefined,
    access: ListenAccess | undefined,
    principal?: string,
  ): LegacyStream {
    const resources = new Map<string, string>();
    const listener: Listener = {
      upstream,
      flags: new Set(HONOURED_FLAGS),
      resources,
      subscriptionId: undefined,
      outgoing,
      access,
      principal,
    };
    outgoing.writeHead(200, SSE_HEADERS);
    outgoing.flushHeaders();
    this.listeners.add(listener);
    const keepAlive = setInterval(() => outgoing.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    keepAlive.unref();
    outgoing.once('close', () => {
      clearInterval(keepAlive);
      if (!this.listeners.delete(listener)) return;
      for (const [uri, owner] of resources) this.subscriptions?.remove(owner, uri);
    });
    return {
      subscribe: (uri) => {
        const owner = this.subscriptions?.owner(uri, upstream);
        if (owner === undefined || (access && !access.reads(uri, owner))) return false;
        if (!resources.has(uri)) {
          resources.set(uri, owner);
          this.subscriptions!.add(owner, uri);
        }
        return true;
      },
      unsubscribe: (uri) => {
        const owner = resources.get(uri);
        if (owner === undefined) return;
        resources.delete(uri);
        this.subscriptions!.remove(owner, uri);
      },
    };
  }

  /** Ends every stream with the listen result, as a server shutting down should. */
  closeAll(): void {
    for (const listener of [...this.listeners]) {
      this.listeners.delete(listener);
      if (listener.subscriptionId !== undefined) {
        send(listener.outgoing, {
          jsonrpc: '2.0',
          id: listener.subscriptionId,
          result: { resultType: 'complete', _meta: { [META.subscriptionId]: listener.subscriptionId } },
        });
      }
      listener.outgoing.end();
    }
    this.listeners.clear();
  }
}

/** A notification's params, tagged with the listen request's id when there is one. */
function tagged(listener: Listener, params: JsonObject): JsonObject {
  return listener.subscriptionId === undefined
    ? params
    : { ...params, _meta: { [META.subscriptionId]: listener.subscriptionId } };
}

function send(outgoing: ServerResponse, message: unknown): void {
  outgoing.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}
