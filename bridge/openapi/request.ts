// A tool call's arguments as one HTTP request, serialised as the operation's parameters say (OpenAPI 3's
// styles: `simple`, `label`, `matrix` in the path; `form` with or without `explode`, `spaceDelimited`,
// `pipeDelimited`, `deepObject` in the query). Every value is percent-encoded, so no argument can add a path
// segment, a query parameter or a header line of its own; a header value with CR, LF or NUL is refused.
import type { ParameterSpec } from './operations.js';
import type { ToolPlan } from './tools.js';

export interface RestRequest {
  readonly method: string;
  /** The path and query, below the base URL's path. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
}

export class ArgumentError extends Error {}

type Args = Record<string, unknown>;

export function buildRequest(plan: ToolPlan, args: Args, basePath: string): RestRequest {
  const headers: Record<string, string> = { accept: plan.operation.accept };
  const query: string[] = [];
  const cookies: string[] = [];
  let path = plan.operation.path;
  for (const { argument, parameter } of plan.places) {
    const value = args[argument];
    if (value === undefined || value === null) continue;
    if (parameter.in === 'path') path = path.split(`{${parameter.name}}`).join(pathValue(parameter, value));
    else if (parameter.in === 'query') query.push(...queryPairs(parameter, value));
    else if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = headerValue(parameter, value);
    else cookies.push(`${encodeURIComponent(parameter.name)}=${encodeURIComponent(plain(value, ','))}`);
  }
  if (cookies.length) headers.cookie = cookies.join('; ');
  const body = bodyOf(plan, args);
  if (body !== undefined)
    headers['content-type'] = plan.body.shape === 'none' ? 'application/json' : plan.body.mediaType;
  const joined = `${basePath.replace(/\/+$/, '')}${path}${query.length ? `?${query.join('&')}` : ''}`;
  return { method: plan.operation.method, path: joined, headers, ...(body !== undefined && { body }) };
}

function bodyOf(plan: ToolPlan, args: Args): string | undefined {
  const shape = plan.body;
  if (shape.shape === 'none') return undefined;
  let value: unknown;
  if (shape.shape === 'nested') value = args[shape.argument];
  else {
    const fields = shape.fields.filter((field) => args[field] !== undefined);
    if (fields.length === 0) return undefined;
    value = Object.fromEntries(fields.map((field) => [field, args[field]]));
  }
  if (value === undefined) return undefined;
  if (shape.kind === 'json') return JSON.stringify(value);
  const form = new URLSearchParams();
  for (const [key, field] of Object.entries((value ?? {}) as Args)) {
    if (Array.isArray(field)) for (const item of field) form.append(key, scalar(item));
    else if (field !== undefined && field !== null) form.append(key, scalar(field));
  }
  return form.toString();
}

/** A value as the text of one parameter: objects as JSON, except where a style spreads them. */
function scalar(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** Encodes a path value; `.` and `..` too, which a server would read as path segments of their own. */
function encodeSegment(value: string): string {
  return encodeURIComponent(value).replace(/\./g, '%2E');
}

function entries(value: unknown): [string, unknown][] | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.entries(value) : undefined;
}

/** `simple` joins with commas; `explode` spreads an object's entries as k=v. */
function plain(value: unknown, separator: string, explode = false, encode = (s: string) => s): string {
  if (Array.isArray(value)) return value.map((item) => encode(scalar(item))).join(separator);
  const pairs = entries(value);
  if (pairs)
    return pairs
      .map(([key, item]) =>
        explode ? `${encode(key)}=${encode(scalar(item))}` : `${encode(key)},${encode(scalar(item))}`,
      )
      .join(separator);
  return encode(scalar(value));
}

function pathValue(parameter: ParameterSpec, value: unknown): string {
  const { style, explode, name } = parameter;
  if (style === 'label') return `.${plain(value, explode ? '.' : ',', explode, encodeSegment)}`;
  if (style === 'matrix') {
    if (Array.isArray(value) && explode) return value.map((item) => `;${name}=${encodeSegment(scalar(item))}`).join('');
    if (entries(value) && explode) return `;${plain(value, ';', true, encodeSegment)}`;
    return `;${name}=${plain(value, ',', false, encodeSegment)}`;
  }
  return plain(value, ',', explode, encodeSegment);
}

function queryPairs(parameter: ParameterSpec, value: unknown): string[] {
  const name = encodeURIComponent(parameter.name);
  const enc = encodeURIComponent;
  const pairs = entries(value);
  if (parameter.style === 'deepObject' && pairs)
    return pairs.map(([key, item]) => `${name}%5B${enc(key)}%5D=${enc(scalar(item))}`);
  const delimiter = { spaceDelimited: '%20', pipeDelimited: '%7C', tabDelimited: '%09' }[parameter.style];
  if (Array.isArray(value)) {
    if (delimiter) return [`${name}=${value.map((item) => enc(scalar(item))).join(delimiter)}`];
    if (parameter.explode) return value.map((item) => `${name}=${enc(scalar(item))}`);
    return [`${name}=${value.map((item) => enc(scalar(item))).join(',')}`];
  }
  if (pairs) {
    if (parameter.explode) return pairs.map(([key, item]) => `${enc(key)}=${enc(scalar(item))}`);
    return [`${name}=${pairs.map(([key, item]) => `${enc(key)},${enc(scalar(item))}`).join(',')}`];
  }
  return [`${name}=${enc(scalar(value))}`];
}

function headerValue(parameter: ParameterSpec, value: unknown): string {
  const text = plain(value, ',', parameter.explode);
  if (/[\r\n\0]/.test(text))
    throw new ArgumentError(`the header argument "${parameter.name}" may not hold CR, LF or NUL characters`);
  return text;
}
