// The audit step: what one request's decision leaves behind — a line in the audit log (when configured) and,
// for a refusal, an entry among the recent denials the status page shows. Metrics are counted by serve().
import type { Principal } from '../../policy/principal.js';
import type { Verdict } from '../../policy/guard.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { McpCall } from './call.js';

/** What an audit line says of the decision. */
export type Decision = Pick<Verdict, 'allowed' | 'rule' | 'target'>;

export function record(
  call: McpCall,
  principal: Principal,
  method: string,
  verdict: Decision,
  args?: unknown,
  traceId?: string,
): void {
  if (!verdict.allowed)
    call.edge.tracker.denied({
      time: new Date().toISOString(),
      principal: principal.id,
      method,
      target: verdict.target,
      rule: verdict.rule,
    });
  const span = call.span;
  // Without authentication or policies every request is let through: then only refusals are worth an event.
  if (span !== undefined && (!verdict.allowed || call.security.guard || call.security.authenticator.enabled))
    span.event('mcp.gateway.policy', {
      'mcp.gateway.decision': verdict.allowed ? 'allow' : 'deny',
      'mcp.gateway.rule': verdict.rule,
      ...(verdict.target && { 'mcp.gateway.target': verdict.target }),
    });
  const audit = call.security.audit;
  audit?.record({
    principal: principal.id,
    via: principal.via,
    endpoint: call.server ?? call.name, // 'mcp', 'search' or 'profiles/<name>' off a server's own endpoint
    method,
    target: verdict.target,
    decision: verdict.allowed ? 'allow' : 'deny',
    rule: verdict.rule,
    latencyMs: Math.round((performance.now() - call.started) * 1000) / 1000,
    ...(args !== undefined && audit.includeArguments && { arguments: args }),
    ...(traceId && { traceId }),
    ...(span && { trace_id: span.traceId, span_id: span.spanId }),
  });
}

/** A tool call's arguments, which the audit log may keep. */
export function argsOf(message: JsonRpcRequest): unknown {
  return message.method === 'tools/call' ? message.params?.arguments : undefined;
}
