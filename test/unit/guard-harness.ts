// The guard as the policy tests knew it before the router placed requests: `check(server, message, …)`
// places the target from prefixes and the given lookups (what src/aggregate/router.ts does from its
// lists), then asks policy/guard.ts to judge it. Lets those tests keep every assertion unchanged.
import type { Grant } from '../../policy/allow-list.js';
import { Guard, isNeed, type Verdict } from '../../policy/guard.js';
import type { PinStore } from '../../policy/pins.js';
import type { Principal } from '../../policy/principal.js';
import { PLAIN_TARGET, type Target } from '../../policy/target.js';
import { isObject, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { publicName } from '../../protocol/public-names.js';

export interface GuardOptions {
  prefixes: ReadonlyMap<string, string>;
  separator: string;
  ownerOf(uri: string): string | undefined;
  resolveOwner(uri: string): Promise<string | undefined>;
  knows(kind: 'tools' | 'prompts', name: string): Promise<boolean>;
  pins: PinStore;
}

export type { Verdict };

export class PolicyGuard {
  private readonly guard: Guard;

  constructor(private readonly options: GuardOptions) {
    this.guard = new Guard({
      prefixes: options.prefixes,
      separator: options.separator,
      ownerOf: options.ownerOf,
      pins: options.pins,
    });
  }

  shape(server: string | undefined, method: string, response: JsonRpcResponse, grant: Grant): JsonRpcResponse {
    // A tools list these tests show stands for the server's own list read now, which is what the edge reads
    // for a pinned call (src/edge/judge.ts); the guard itself takes a list only as a sighting of unknown age.
    const shaped = this.guard.shape(server, method, response, grant);
    if (method === 'tools/list' && 'result' in response && Array.isArray(response.result.tools))
      this.readNow(server, response.result.tools, grant);
    return shaped;
  }

  private readNow(endpoint: string | undefined, tools: unknown[], grant: Grant): void {
    const { prefixes, separator } = this.options;
    for (const [server, prefix] of prefixes) {
      if (endpoint !== undefined && endpoint !== server) continue;
      const own = tools.flatMap((tool) => {
        if (!isObject(tool) || typeof tool.name !== 'string') return [];
        if (endpoint !== undefined) return [tool];
        return tool.name.startsWith(prefix + separator)
          ? [{ ...tool, name: tool.name.slice(prefix.length + separator.length) }]
          : [];
      });
      this.guard.definitionsRead(server, own, grant, Date.now());
    }
  }

  async check(
    server: string | undefined,
    message: JsonRpcRequest,
    grant: Grant,
    principal: Principal,
    findTool: (name: string) => Promise<void>,
  ): Promise<Verdict> {
    const target = await this.place(server, message);
    let outcome = this.guard.judge(target, message, grant, principal);
    if (isNeed(outcome) && target.kind === 'tools') {
      await findTool(target.publicName!);
      outcome = this.guard.judge(target, message, grant, principal, true);
    }
    if (isNeed(outcome)) throw new Error(`the guard still needs ${outcome.need}`);
    return outcome;
  }

  private async place(server: string | undefined, message: JsonRpcRequest): Promise<Target> {
    const params = message.params ?? {};
    const ref = isObject(params.ref) ? params.ref : {};
    switch (message.method) {
      case 'tools/call':
        return this.named('tools', server, params.name);
      case 'prompts/get':
        return this.named('prompts', server, params.name);
      case 'resources/read':
        return this.uri(server, params.uri);
      case 'completion/complete':
        return ref.type === 'ref/prompt' ? this.named('prompts', server, ref.name) : this.uri(server, ref.uri);
      default:
        return PLAIN_TARGET;
    }
  }

  private async named(kind: 'tools' | 'prompts', endpoint: string | undefined, given: unknown): Promise<Target> {
    if (typeof given !== 'string')
      return { kind, given, endpoint, server: endpoint, publicName: undefined, listed: undefined, confirmed: true };
    const { prefixes, separator } = this.options;
    const name = endpoint === undefined ? given : publicName(prefixes.get(endpoint) ?? endpoint, separator, given);
    const server = endpoint ?? [...prefixes].find(([, prefix]) => name.startsWith(prefix + separator))?.[0];
    const listed = server !== undefined && (await this.options.knows(kind, name)) ? { server, name } : undefined;
    return { kind, given, endpoint, server, publicName: name, listed, confirmed: true };
  }

  private async uri(endpoint: string | undefined, uri: unknown): Promise<Target> {
    const owner = endpoint ?? (typeof uri === 'string' ? await this.options.resolveOwner(uri) : undefined);
    return { kind: 'resources', uri, endpoint, owner, ambiguous: undefined, confirmed: true };
  }
}
