// The spec's rules for `x-mcp-header` declarations in a tool's inputSchema (Streamable HTTP, "Custom Headers
// from Tool Parameters"): a client MUST reject a tool any of whose declarations break them, leaving it out of
// tools/list. The rules: the value is a non-empty string of HTTP token characters (RFC 9110 `tchar`: no
// controls, no CR or LF), unique among the schema's declarations regardless of case, on a property of type
// string, integer or boolean (not number), reached from the root by `properties` keys alone (never through
// items, combinators, conditionals, $ref or $defs, and never on the root itself). Pure: no I/O.
import { isObject } from './jsonrpc.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
const KEY = 'x-mcp-header';
/** Keywords whose values are data, not schemas: an object there holding the key declares nothing. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/** Why the tool's declarations are invalid (the first problem found), or undefined when they are valid or absent. */
export function headerDeclarationProblem(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  return walk(inputSchema, [], true, seen);
}

/**
 * `reachable`: the node is the root or reached from it by `properties` keys alone. Every node of the schema
 * is visited, so a declaration anywhere else is found too.
 */
function walk(node: unknown, path: string[], reachable: boolean, seen: Map<string, string>): string | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const problem = walk(item, path, false, seen);
      if (problem) return problem;
    }
    return undefined;
  }
  if (!isObject(node)) return undefined;
  if (KEY in node) {
    const problem = declarationProblem(node, path, reachable, seen);
    if (problem) return problem;
  }
  for (const [key, child] of Object.entries(node)) {
    if (key === KEY || DATA_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isObject(child)) {
      for (const [name, property] of Object.entries(child)) {
        const problem = walk(property, [...path, name], reachable, seen);
        if (problem) return problem;
      }
      continue;
    }
    // Any other keyword (items, oneOf, $defs, a property named like a keyword's value…) leaves the static chain.
    const problem = walk(child, [...path, key], false, seen);
    if (problem) return problem;
  }
  return undefined;
}

function declarationProblem(
  node: Record<string, unknown>,
  path: string[],
  reachable: boolean,
  seen: Map<string, string>,
): string | undefined {
  const value = node[KEY];
  const where = path.length ? path.join('.') : 'the schema root';
  if (typeof value !== 'string')
    return `x-mcp-header at ${where} is ${value === null ? 'null' : typeof value}, not a string`;
  if (value === '') return `x-mcp-header at ${where} is empty`;
  if (!TOKEN.test(value)) return `x-mcp-header ${JSON.stringify(value)} at ${where} is not an HTTP header token`;
  if (!reachable || path.length === 0)
    return `x-mcp-header ${JSON.stringify(value)} at ${where} is not on a property reached by properties keys alone`;
  if (typeof node.type !== 'string' || !PRIMITIVE.has(node.type)) {
    return (
      `x-mcp-header ${JSON.stringify(value)} at ${where} is on a property of type ` +
      `${JSON.stringify(node.type ?? null)}; only string, integer and boolean may be mirrored`
    );
  }
  const lower = value.toLowerCase();
  const earlier = seen.get(lower);
  if (earlier !== undefined)
    return (
      `x-mcp-header ${JSON.stringify(value)} at ${where} repeats ${JSON.stringify(earlier)} (header names ` +
      `ignore case)`
    );
  seen.set(lower, value);
  return undefined;
}
