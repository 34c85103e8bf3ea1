// What the task steps read of a request, as a type of the tasks' own. The edge's McpCall satisfies it as it
// stands (structurally), so the edge asks the task step and hands it the call, and nothing in src/tasks/
// imports the edge: "the edge asks the task step; never back". Each member is as narrow as the steps use it.
import type { CallerIdentity, Upstream } from '../../bridge/upstream.js';
import type { Log } from '../../infra/log.js';
import type { Grant } from '../../policy/allow-list.js';
import type { Verdict } from '../../policy/guard.js';
import type { Target } from '../../policy/target.js';
import type { JsonObject, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { TaskIdCodec, TaskRef } from './task-ids.js';

/** A task request whose id opened: what it names, and the id as the caller gave it. */
export interface OpenedTask {
  ref: TaskRef;
  given: string;
}

/** A refusal the task step decided; the edge writes and audits it (its judge step's `refuse`). */
export type TaskRefusal = Verdict & { refusal: NonNullable<Verdict['refusal']> };

/** An endpoint as the task steps see it: its upstream, and a view's names (a profile over /mcp). */
export interface TaskEndpoint {
  upstream: Upstream;
  view?: { outbound(kind: 'tools', mcpName: string): string | undefined };
}

/** What every request of one edge shares, as far as tasks go. */
export interface TaskEdge {
  readonly tasks: TaskIdCodec;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** /mcp's router, when /mcp is served: it places a task's tool under its /mcp name. */
  readonly router: { resolve(server: string | undefined, message: JsonRpcRequest): Target } | undefined;
  readonly log: Log;
  endpointOf(name: string): TaskEndpoint | undefined;
}

/** One request, as far as tasks go. */
export interface TaskCall {
  readonly edge: TaskEdge;
  readonly principal: { readonly id: string };
  readonly endpoint: TaskEndpoint | undefined;
  /** The endpoint's name (a profile's name on a view). */
  readonly name: string;
  /** The upstream of /servers/<name>/mcp; undefined on /mcp and on views over it. */
  readonly server: string | undefined;
  readonly security: { readonly guard: unknown };
  readonly grant: Grant | undefined;
  readonly callerContext: string;
  readonly caller: CallerIdentity;
  readonly span: { setAttribute(key: string, value: string): void } | undefined;
  task: OpenedTask | undefined;
  taskTool: string | undefined;
  /**
   * What a task status of `server`'s task, created by `tool` (its /mcp name), may show this caller on a listen:
   * `params` itself, a redacted copy, or a failed status in its place (the edge's guardrails decide).
   */
  shownTaskStatus(server: string, tool: string | undefined, params: JsonObject): JsonObject | Promise<JsonObject>;
}
