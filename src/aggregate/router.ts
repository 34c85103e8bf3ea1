// Places a request on /mcp (or judges where a /servers/<name>/mcp name sits on /mcp) once, before policy:
// a tool or prompt by its public name through one Map lookup, a resource URI through the resource lists
// (an MCP Apps ui:// URI by the namespace it carries on /mcp: protocol/ui-uris.ts).
// What it returns is plain data (policy/target.ts) the guard judges and the execute step calls with; the
// routes are learned from the lists that pass through the aggregator, and a miss may read them again (at
// most once a second per list). Calls go to the owner with the original name restored: nothing downstream
// looks the name up again.
import type { Reach, RequestOptions, Upstream } from '../../bridge/upstream.js';
import { PLAIN_TARGET, type NamedTarget, type Target, type UriTarget } from '../../policy/target.js';
import {
  ErrorCode,
  errorResponse,
  isObject,
  type JsonObject,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc.js';
import type { ListMethod } from '../../protocol/mcp.js';
import { publicName } from '../../protocol/public-names.js';
import { isUiUri, ownerOfUiUri, showUiContents } from '../../protocol/ui-uris.js';
import { NameRoutes } from './name-routes.js';
import { ResourceOwners } from './resource-owners.js';
import { alreadyConnected, type CallerConnections, CONNECT_TOOL, placeholderTool } from './connect-placeholder.js';
import type { Route } from './name-routes.js';

export interface RouterOptions {
  /** In config order; read live, as a reload may change them. */
  upstreams: ReadonlyMap<string, Upstream>;
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  /**
   * Reads one list again from every upstream (single flight, at most once a second), as `asCaller` when
   * given: a server reached as each caller lists its own tools only to them.
   */
  refresh(method: ListMethod, asCaller?: ListReader): Promise<void>;
  /** Why `server`'s `method` failed the last time it was read, while it has not answered it since. */
  listFailure?: ((server: string, method: ListMethod) => string | undefined) | undefined;
  /** Whether a caller has connected a server (for a call of its connect placeholder). */
  connections?: CallerConnections | undefined;
  /** Whether a server's lists are each caller's own (a child per caller, token exchange): read as the caller. */
  listsPerCaller?: ((server: string) => boolean) | undefined;
  /** Why a server knows a tool but does not offer it (an OpenAPI operation refused at load), for a call of it. */
  whyNotOffered?: ((server: string, tool: string) => string | undefined) | undefined;
}

/**
 * Who a list is read as, when it matters: the caller's context, identity and reach, as their own requests carry them.
 */
export type ListReader = Pick<RequestOptions, 'authContext' | 'caller' | 'reach'>;

export class Router {
  readonly tools = new NameRoutes();
  readonly prompts = new NameRoutes();
  readonly resources = new ResourceOwners();

  constructor(private readonly options: RouterOptions) {}

  /**
   * Where a request goes, from what the lists said: Map lookups only, nothing is read. `server` is the
   * endpoint's upstream, undefined on /mcp; off /mcp only the guard needs this (names as /mcp shows them).
   */
  resolve(server: string | undefined, message: JsonRpcRequest): Target {
    const params = message.params;
    switch (message.method) {
      case 'tools/call':
        return this.named('tools', server, params?.name);
      case 'prompts/get':
        return this.named('prompts', server, params?.name);
      case 'resources/read':
        return this.uri(server, params?.uri);
      case 'completion/complete': {
        const ref = isObject(params?.ref) ? params.ref : {};
        return ref.type === 'ref/prompt' ? this.named('prompts', server, ref.name) : this.uri(server, ref.uri);
      }
      default:
        return PLAIN_TARGET;
    }
  }

  /**
   * The same target once the lists it depends on were read again; what a name or URI nobody listed costs.
   * Where the owner is a server each caller reaches as themselves (their own account or values), the lists
   * are read as `asCaller`: read as the gateway it has nothing to list, and a caller who connected it, but
   * whose list was read on another replica or before a restart, would be told their tool is unknown.
   */
  async confirm(target: Target, asCaller?: ListReader): Promise<Target> {
    if (target.kind === 'none' || target.confirmed) return target;
    if (target.kind === 'resources') {
      // A URI does not say its server: read as the caller when any server might be theirs.
      const as = this.anyReachedAsCaller() ? asCaller : undefined;
      await Promise.all([
        this.options.refresh('resources/list', as),
        this.options.refresh('resources/templates/list', as),
      ]);
      return { ...this.uri(target.endpoint, target.uri), confirmed: true };
    }
    const as = target.server !== undefined && this.readsAsCaller(target.server) ? asCaller : undefined;
    await this.options.refresh(target.kind === 'tools' ? 'tools/list' : 'prompts/list', as);
    // On /mcp by its /mcp name: a profile's target keeps the public name the caller gave in `given`.
    const name = target.endpoint === undefined ? target.publicName : target.given;
    const confirmed: NamedTarget = { ...this.named(target.kind, target.endpoint, name), given: target.given };
    const listed =
      confirmed.kind === 'tools' && confirmed.listed === undefined && as !== undefined
        ? await this.connectFirstRoute(confirmed, as)
        : confirmed.listed;
    return { ...confirmed, listed, confirmed: true };
  }

  /**
   * A tool under the prefix of a server the caller has not connected: their list holds only its placeholder,
   * so any name there is routed as the placeholder is, and the server's stack answers with the connect link
   * rather than "Unknown tool" (issue 45 item 3). A caller who has connected keeps the miss: the tool is unknown.
   */
  private async connectFirstRoute(target: NamedTarget, asCaller: ListReader): Promise<Route | undefined> {
    const server = target.server;
    const principal = asCaller.caller?.principal;
    const kind = server === undefined ? undefined : this.options.connections?.needs(server);
    if (server === undefined || kind === undefined || principal === undefined || target.publicName === undefined)
      return undefined;
    const head = this.headOf(server);
    if (!target.publicName.startsWith(head)) return undefined;
    if (await this.options.connections!.connected(server, principal).catch(() => true)) return undefined;
    const definition = { ...placeholderTool(server, kind), name: target.publicName };
    return { server, name: target.publicName.slice(head.length), definition, placeholder: true };
  }

  /**
   * A /mcp request for a placed target: to its owner, under the upstream's own name. A target nobody serves
   * (or outside the caller's reach) is answered here in the words /mcp always used.
   */
  call(target: NamedTarget | UriTarget, message: JsonRpcRequest, options: RequestOptions): Promise<JsonRpcResponse> {
    const owner = target.kind === 'resources' ? target.owner : target.listed?.server;
    const upstream =
      owner === undefined || (options.reach && !options.reach.reaches(owner))
        ? undefined
        : this.options.upstreams.get(owner);
    if (!upstream) return Promise.resolve(this.miss(target, message, options.reach));
    if (target.kind === 'tools' && target.listed!.placeholder)
      return this.connect(owner!, upstream, target, message, options);
    // The name is restored in place, as the message is this request's own (the legacy adapter copies per attempt).
    if (target.kind !== 'resources') nameHolder(message).name = target.listed!.name;
    else if (target.ownUri !== undefined) return this.readUi(upstream, owner!, target.ownUri, message, options);
    return upstream.request(message, options);
  }

  /**
   * A call of a server's connect placeholder: the server's stack answers it with the connect flow as it
   * answers any of its tools for a caller who has not connected; a caller who has (their list is stale)
   * is told to list again, and nothing reaches the server.
   */
  private async connect(
    server: string,
    upstream: Upstream,
    target: NamedTarget,
    message: JsonRpcRequest,
    options: RequestOptions,
  ): Promise<JsonRpcResponse> {
    const principal = options.caller?.principal;
    const connections = this.options.connections;
    if (principal !== undefined && connections && (await connections.connected(server, principal).catch(() => false)))
      return alreadyConnected(message.id, server);
    nameHolder(message).name = target.listed!.name;
    return upstream.request(message, options);
  }

  private anyReachedAsCaller(): boolean {
    for (const server of this.options.upstreams.keys()) if (this.readsAsCaller(server)) return true;
    return false;
  }

  /** Whether the server lists to each caller alone (their own account, values, child or exchanged token). */
  private readsAsCaller(server: string): boolean {
    return this.options.connections?.needs(server) !== undefined || this.options.listsPerCaller?.(server) === true;
  }

  /**
   * How every tool and prompt name of `server` begins on /mcp: `<prefix><separator>` (as of now: a reload may change
   * the prefix).
   */
  headOf(server: string): string {
    return (this.options.prefixes.get(server) ?? server) + this.options.separator;
  }

  /** The one upstream that owns a resource URI (or template), from what the lists said; else undefined. */
  ownerOf(uri: string): string | undefined {
    const owner = this.resources.owner(uri);
    return owner && 'server' in owner ? owner.server : undefined;
  }

  /** A ui:// request to its owner under the owner's own URI; a read's contents come back as /mcp names them. */
  private async readUi(
    upstream: Upstream,
    owner: string,
    ownUri: string,
    message: JsonRpcRequest,
    options: RequestOptions,
  ): Promise<JsonRpcResponse> {
    nameHolder(message).uri = ownUri;
    const response = await upstream.request(message, options);
    if (!('result' in response)) return response;
    const result = showUiContents(this.headOf(owner), response.result);
    // A new answer, not a spread: a cached one may carry its serialised bytes, which no longer say this.
    return result === response.result ? response : { jsonrpc: '2.0', id: response.id, result };
  }

  /** Every upstream with the head its names (and ui:// URIs) carry on /mcp. */
  private *heads(): Iterable<[server: string, head: string]> {
    for (const server of this.options.upstreams.keys()) yield [server, this.headOf(server)];
  }

  private named(kind: 'tools' | 'prompts', server: string | undefined, given: unknown): NamedTarget {
    if (typeof given !== 'string')
      return { kind, given, endpoint: server, server, publicName: undefined, listed: undefined, confirmed: true };
    const routes = kind === 'tools' ? this.tools : this.prompts;
    const name =
      server === undefined
        ? given
        : publicName(this.options.prefixes.get(server) ?? server, this.options.separator, given);
    const listed = routes.get(name) ?? (kind === 'tools' ? this.placeholderRoute(name) : undefined);
    return {
      kind,
      given,
      endpoint: server,
      server: server ?? listed?.server ?? this.serverByPrefix(name),
      publicName: name,
      listed,
      confirmed: false,
    };
  }

  /**
   * A connect placeholder named by a caller whose list this process did not build (another replica did, or
   * the name was remembered): it is placed all the same, since its name follows from the server's alone.
   * Only on a miss.
   */
  private placeholderRoute(name: string): Route | undefined {
    const connections = this.options.connections;
    if (!connections) return undefined;
    for (const server of this.options.upstreams.keys()) {
      const kind = connections.needs(server);
      if (
        kind === undefined ||
        publicName(this.options.prefixes.get(server) ?? server, this.options.separator, CONNECT_TOOL) !== name
      )
        continue;
      return { server, name: CONNECT_TOOL, definition: { ...placeholderTool(server, kind), name }, placeholder: true };
    }
    return undefined;
  }

  private uri(endpoint: string | undefined, uri: unknown): UriTarget {
    if (endpoint !== undefined || typeof uri !== 'string')
      return { kind: 'resources', uri, endpoint, owner: endpoint, ambiguous: undefined, confirmed: true };
    // A ui:// URI names its server in its head (ui-uris.ts): placed without the lists, which need not hold it.
    if (isUiUri(uri)) {
      const ui = ownerOfUiUri(uri, this.heads());
      return {
        kind: 'resources',
        uri,
        endpoint,
        owner: ui?.server,
        ambiguous: undefined,
        confirmed: true,
        ownUri: ui?.uri,
      };
    }
    const owner = this.resources.owner(uri);
    return {
      kind: 'resources',
      uri,
      endpoint,
      owner: owner && 'server' in owner ? owner.server : undefined,
      ambiguous: owner && 'ambiguous' in owner ? owner.ambiguous : undefined,
      confirmed: false,
    };
  }

  /** The server whose prefix a name nobody listed carries: only on a miss, as a hit's route says it. */
  private serverByPrefix(name: string): string | undefined {
    const separator = this.options.separator;
    for (const [owner, prefix] of this.options.prefixes) {
      if (
        name.length >= prefix.length + separator.length &&
        name.startsWith(prefix) &&
        name.startsWith(separator, prefix.length)
      )
        return owner;
    }
    return undefined;
  }

  private miss(target: NamedTarget | UriTarget, message: JsonRpcRequest, reach: Reach | undefined): JsonRpcResponse {
    if (target.kind === 'resources') {
      const uri = target.uri;
      if (typeof uri !== 'string')
        return errorResponse(message.id, ErrorCode.InvalidParams, 'a resource uri (string) is required');
      if (target.ambiguous && !target.owner) {
        const servers = target.ambiguous;
        return errorResponse(
          message.id,
          ErrorCode.InvalidParams,
          `Resource ${uri} is offered by ${servers.join(' and ')}; read it through /servers/<name>/mcp to say which`,
          {
            uri,
            servers,
          },
        );
      }
      return errorResponse(
        message.id,
        ErrorCode.InvalidParams,
        `Resource not found: no upstream lists ${uri} or a template that matches it`,
        { uri },
      );
    }
    if (typeof target.given !== 'string')
      return errorResponse(message.id, ErrorCode.InvalidParams, 'params.name must be a string');
    const unread = target.server === undefined ? undefined : this.unreadList(target.kind, target.server);
    if (unread !== undefined) return errorResponse(message.id, ErrorCode.InternalError, unread);
    return errorResponse(
      message.id,
      ErrorCode.InvalidParams,
      this.describeUnknown(target.kind === 'tools' ? 'tool' : 'prompt', target.given, reach),
    );
  }

  /**
   * Why a name could not be looked up, when its owner's list failed the last time it was read (no answer within the
   * deadline, an error): not "unknown", which would be a guess; the same call may well work again.
   */
  private unreadList(kind: 'tools' | 'prompts', server: string): string | undefined {
    const method = kind === 'tools' ? 'tools/list' : 'prompts/list';
    const failure = this.options.listFailure?.(server, method);
    // A server that is down says so better (describeUnknown names its state and last error).
    if (failure === undefined || this.options.upstreams.get(server)?.status().state !== 'ready') return undefined;
    return (
      `Could not look this ${kind.slice(0, -1)} up: upstream '${server}' failed its ${method} when it was read ` +
      `again for it (${failure}); try again`
    );
  }

  /** Why a name is unknown: says which server its prefix names and what state that server is in. */
  private describeUnknown(kind: string, name: string, reach: Reach | undefined): string {
    for (const server of this.options.upstreams.keys()) {
      if (reach && !reach.reaches(server)) continue;
      if (!name.startsWith(this.headOf(server))) continue;
      const status = this.options.upstreams.get(server)?.status();
      if (!status) continue;
      const withheld =
        kind === 'tool' ? this.options.whyNotOffered?.(server, name.slice(this.headOf(server).length)) : undefined;
      if (withheld !== undefined) return `Tool ${name} is not offered: ${withheld}`;
      const why =
        status.state === 'ready'
          ? `it does not list a ${kind} by that name`
          : `it is ${status.state}${status.lastError ? ` (${status.lastError})` : ''}`;
      return `Unknown ${kind}: ${name}; its prefix names upstream '${server}', but ${why}`;
    }
    return (
      `Unknown ${kind}: ${name}; names on /mcp are <server>${this.options.separator}<name> (list them with ` +
      `${kind}s/list)`
    );
  }
}

/** Where a request names its tool, prompt or resource: params, or a completion's ref. */
function nameHolder(message: JsonRpcRequest): JsonObject {
  const params = message.params ?? {};
  return message.method === 'completion/complete' && isObject(params.ref) ? params.ref : params;
}

/** Whether a target is where it will stay: found, or looked for again already; else `confirm` first. */
export function placed(target: Target): boolean {
  if (target.kind === 'none' || target.confirmed) return true;
  return target.kind === 'resources'
    ? target.owner !== undefined || target.ambiguous !== undefined
    : target.listed !== undefined;
}
