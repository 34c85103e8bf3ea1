// Mcp-Param-{Name}: tool arguments mirrored into headers, as declared by `x-mcp-header` in a tool's
// inputSchema. The gateway learns each tool's declarations from the tools/list answers that pass through
// it, then checks a tools/call's headers against its body. Headers of tools it has not seen listed are
// forwarded unchecked, as the spec asks of intermediaries that do not recognise them.
import { isRawNumber } from '../../protocol/exact-json.js';
import { isObject, type JsonObject } from '../../protocol/jsonrpc.js';
import { decodeHeaderValue } from './header-value.js';

export const PARAM_HEADER_PREFIX = 'mcp-param-';
const DECIMAL = /^-?\d+(\.\d+)?$/;

interface MirroredArgument {
  /** Lower-cased header name, `mcp-param-…`. */
  header: string;
  path: string[];
}

export class ToolHeaderIndex {
  private readonly byTool = new Map<string, MirroredArgument[]>();
  private readonly seen = new WeakSet<object>();

  /** Records the x-mcp-header declarations of one tools/list page. */
  learn(result: unknown): void {
    if (!isObject(result) || !Array.isArray(result.tools)) return;
    // Cached answers hand out the same tools array again and again: read each one once.
    if (this.seen.has(result.tools)) return;
    this.seen.add(result.tools);
    for (const tool of result.tools) {
      if (!isObject(tool) || typeof tool.name !== 'string') continue;
      const mirrored: MirroredArgument[] = [];
      collect(tool.inputSchema, [], mirrored);
      if (mirrored.length) this.byTool.set(tool.name, mirrored);
      else this.byTool.delete(tool.name);
    }
  }

  /** Returns a description of the first mismatch between headers and arguments, or undefined. */
  check(toolName: string, args: unknown, headers: (name: string) => string | undefined): string | undefined {
    const mirrored = this.byTool.get(toolName);
    if (!mirrored) return undefined;
    for (const { header, path } of mirrored) {
      const value = valueAt(args, path);
      const raw = headers(header);
      if (value === undefined || value === null) {
        if (raw !== undefined) return `${header} is set but arguments.${path.join('.')} is absent`;
        continue;
      }
      if (raw === undefined)
        return `${header} is missing; tool '${toolName}' mirrors arguments.${path.join('.')} into it`;
      const decoded = decodeHeaderValue(raw);
      if (decoded === undefined)
        return `${header} has characters a header cannot carry; send non-ASCII values as =?base64?<UTF-8 Base64>?=`;
      if (!sameValue(decoded, value)) {
        return `${header} does not match arguments.${path.join('.')}`;
      }
    }
    return undefined;
  }
}

/**
 * The Mcp-Param-* headers a client would send for these arguments of a tool with this inputSchema (values
 * encoded by `encode`); undefined when it mirrors none. For a call the gateway makes on a caller's behalf
 * (search mode's call_tool), whose client could not know to send them.
 */
export function mirroredHeaders(
  inputSchema: unknown,
  args: unknown,
  encode: (value: string) => string,
): Record<string, string> | undefined {
  const mirrored: MirroredArgument[] = [];
  collect(inputSchema, [], mirrored);
  let headers: Record<string, string> | undefined;
  for (const { header, path } of mirrored) {
    const value = valueAt(args, path);
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      (headers ??= {})[header] = encode(String(value));
    else if (isRawNumber(value)) (headers ??= {})[header] = encode(value.rawJSON);
  }
  return headers;
}

function collect(schema: unknown, at: string[], out: MirroredArgument[]): void {
  if (!isObject(schema)) return;
  if (typeof schema['x-mcp-header'] === 'string' && at.length) {
    out.push({ header: PARAM_HEADER_PREFIX + schema['x-mcp-header'].toLowerCase(), path: at });
  }
  // Only plain `properties` chains are statically reachable (the spec excludes items, combinators, $ref).
  const properties = schema.properties;
  if (!isObject(properties)) return;
  for (const [key, child] of Object.entries(properties)) collect(child, [...at, key], out);
}

function valueAt(args: unknown, path: string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (!isObject(node)) return undefined;
    node = (node as JsonObject)[key];
  }
  return node;
}

function sameValue(header: string, value: unknown): boolean {
  if (typeof value === 'string') return header === value;
  if (typeof value === 'boolean') return header === String(value);
  // Integers travel in decimal; "42.0" and "42" are the same number, "0x2A" is not a spelling of it.
  if (typeof value === 'number') return DECIMAL.test(header) && Number(header) === value;
  // A number kept as written (beyond a double): compared digit for digit, as an integer when both are one.
  if (isRawNumber(value)) return DECIMAL.test(header) && sameDecimal(header, value.rawJSON);
  return false;
}

function sameDecimal(header: string, written: string): boolean {
  const whole = /^(-?\d+)(?:\.0+)?$/;
  const a = whole.exec(header);
  const b = whole.exec(written);
  return a && b ? BigInt(a[1]!) === BigInt(b[1]!) : header === written;
}
