// The Mcp-Param-* headers a tools/call carries upstream mirror its arguments (an HTTP upstream sees them): when
// guardrails redact an argument, its header copy must not go up as it was (docs/guardrails.md, Actions).
import { encodeHeaderValue } from '../../bridge/http/index.js';
import type { RequestOptions } from '../../bridge/upstream.js';
import type { CompiledRule } from '../../policy/guardrails/index.js';
import { redactText } from './content-scan.js';
import { isObject } from '../../protocol/jsonrpc.js';

type Rules = readonly CompiledRule[];

/**
 * The client's Mcp-Param-* headers mirror arguments (an HTTP upstream sees them): a redacted argument must not
 * go up in its header copy, so each header value is redacted by the same rules.
 */
export function redactParamHeaders(
  options: RequestOptions,
  rules: Rules,
  redactedArguments?: ReadonlyMap<string, string>,
): void {
  const headers = options.forwardHeaders;
  if (headers === undefined) return;
  const detectors = rules.flatMap((rule) => (rule.action === 'redact' ? rule.detectors : []));
  let changed: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const plain = decodeHeaderValue(value);
    const redacted = redactedArguments?.get(plain) ?? redactText(plain, detectors);
    if (redacted !== plain) (changed ??= { ...headers })[name] = encodeHeaderValue(redacted);
  }
  if (changed !== undefined) options.forwardHeaders = changed;
}

/** Each string of `before` that `after` (a redacted copy, the same shape) holds changed, with what it became. */
export function changedStrings(before: unknown, after: unknown): Map<string, string> {
  const changed = new Map<string, string>();
  const stack: [unknown, unknown][] = [[before, after]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [was, now] = next;
    if (typeof was === 'string') {
      if (typeof now === 'string' && now !== was) changed.set(was, now);
    } else if (isObject(was) && isObject(now)) {
      for (const key of Object.keys(was)) stack.push([was[key], now[key]]);
    } else if (Array.isArray(was) && Array.isArray(now)) {
      for (const [i, item] of was.entries()) stack.push([item, now[i]]);
    }
  }
  return changed;
}

/** An Mcp-Param-* value as its argument was: the `=?base64?…?=` form decoded (bridge/http/mcp-headers.ts). */
function decodeHeaderValue(value: string): string {
  const sentinel = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return sentinel === null ? value : Buffer.from(sentinel[1]!, 'base64').toString('utf8');
}
