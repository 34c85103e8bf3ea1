// What the fuzz-edge-*.test.ts files send: arbitrary headers (Content-Type, Accept, MCP-Protocol-Version,
// Mcp-Method, Mcp-Name plain and base64, Origin), methods and paths around arbitrary JSON-RPC-shaped bodies
// (wrong types, odd ids, nested _meta, huge strings, batches, deep nesting), and the request they make.
import fc from 'fast-check';
import { META, VERSION } from './harness.js';
import { ALLOWED_ORIGIN, MAX_BODY, MODERATE_DEPTH, type Sent } from './fuzz-edge-kit.js';

export const b64 = (text: string): string => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
/** Characters Node lets a header value carry (tab, visible ASCII, space, and Latin-1). */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09))
  .map((c) => String.fromCharCode(c));
export const headerText = fc.string({ unit: headerChar, maxLength: 80 });

const TOOL_NAMES = [
  'r__echo',
  'r__tool-0',
  'echo',
  'tool-1',
  'r__nope',
  'r__',
  '__',
  '',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'r____proto__',
  'é-😀',
  'r__é',
  'a'.repeat(3000),
];
const URIS = ['recorded://r/doc', 'recorded://r/missing', 'file:///etc/passwd', '', '__proto__', 'x://y/{z}', 'é://😀'];
export const METHODS = [
  'tools/call',
  'tools/call',
  'tools/call',
  'tools/list',
  'tools/list',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'server/discover',
  'completion/complete',
  'subscriptions/listen',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'notifications/cancelled',
  'notifications/initialized',
  'tools/List',
  'TOOLS/CALL',
  '',
  '__proto__',
  'constructor',
  'x'.repeat(500),
];

/** Nests a value `depth` levels deep in arrays or objects. */
function nest(value: unknown, depth: number, kind: 'array' | 'object'): unknown {
  let out = value;
  for (let i = 0; i < depth; i++) out = kind === 'array' ? [out] : { a: out };
  return out;
}

const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
/** Values of the wrong type for wherever they land, some deep, some with prototype-ish keys. */
const odd: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(scalar, fc.integer({ min: 1, max: MODERATE_DEPTH }), fc.constantFrom('array' as const, 'object' as const))
      .map(([v, d, k]) => nest(v, d, k)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      { __proto__x: 1 },
      JSON.parse('{"__proto__":{"polluted":true}}'),
      { constructor: { prototype: { polluted: true } } },
      { hasOwnProperty: 1 },
      [],
      {},
    ),
  },
  // Objects whose own toString/valueOf are not functions are exercised by their own property below (a known defect).
);

/** A JSON text for an id: valid, invalid, and edge-of-number ones, written raw. */
const idText = fc.oneof(
  { weight: 4, arbitrary: fc.integer().map(String) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0',
      '-0',
      '-1',
      '1.5',
      '1e3',
      '1e400',
      '-1e400',
      '18446744073709551616',
      '9007199254740993',
      '1.0',
      'null',
      'true',
      '""',
      '{}',
      '[]',
      '{"id":1}',
      '[1]',
      JSON.stringify('x'.repeat(10_000)),
    ),
  },
  { weight: 1, arbitrary: odd.map((v) => JSON.stringify(v) ?? 'null') },
);

const goodMeta = (): Record<string, unknown> => ({ ...META });
/** _meta: right most of the time, otherwise missing keys, wrong types and versions, odd tokens, nesting. */
const metaArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined).map(() => goodMeta()) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null))
      .map((progressToken) => ({ ...goodMeta(), progressToken })),
  },
  { weight: 1, arbitrary: fc.constant({ ...META, progressToken: 'p' }) },
  { weight: 1, arbitrary: odd.map((progressToken) => ({ ...goodMeta(), progressToken })) },
  { weight: 1, arbitrary: odd.map((v) => ({ ...goodMeta(), 'io.modelcontextprotocol/protocolVersion': v })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('2025-06-18', '2025-11-25', '2026-07-28 ', '', '2099-01-01')
      .map((v) => ({ ...goodMeta(), 'io.modelcontextprotocol/protocolVersion': v })),
  },
  { weight: 1, arbitrary: odd.map((v) => ({ ...goodMeta(), 'io.modelcontextprotocol/clientCapabilities': v })) },
  {
    weight: 1,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 30 }), odd, { maxKeys: 4 })
      .map((extra) => ({ ...goodMeta(), ...extra })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: MODERATE_DEPTH }).map((depth) => ({
      ...goodMeta(),
      'com.example/nested': nest({ _meta: nest({}, 3, 'object') }, depth, 'object'),
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      {},
      null,
      [],
      'meta',
      { 'io.modelcontextprotocol/clientCapabilities': {} },
      { 'io.modelcontextprotocol/protocolVersion': VERSION },
    ),
  },
);

/** A 2025 client's _meta: none, or a progress token (of any type). */
export const legacyMetaArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), odd) }),
  odd,
);

/** params: shaped for the method most of the time; sometimes not an object at all. */
const paramsFor = (meta: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.oneof(
    {
      weight: 9,
      arbitrary: fc.record(
        {
          name: fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...TOOL_NAMES) }, { weight: 1, arbitrary: odd }),
          arguments: fc.oneof(
            { weight: 4, arbitrary: fc.record({ text: fc.string({ maxLength: 50 }) }) },
            { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }) },
            { weight: 1, arbitrary: odd },
          ),
          uri: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...URIS) }, { weight: 1, arbitrary: odd }),
          cursor: fc.oneof(
            fc.string({ maxLength: 60 }),
            odd,
            fc.constantFrom('0', '1', 'abc.def', '.', 'e30.AAAAAAAAAAAAAAAAAAAAAA'),
          ),
          ref: fc.oneof(
            fc.record({
              type: fc.constantFrom('ref/prompt', 'ref/resource', 'x'),
              name: fc.constantFrom('r__hello', 'hello', ''),
              uri: fc.constantFrom(...URIS),
            }),
            odd,
          ),
          argument: fc.oneof(
            fc.record({ name: fc.string({ maxLength: 10 }), value: fc.string({ maxLength: 10 }) }),
            odd,
          ),
          notifications: fc.oneof(fc.constant({ toolsListChanged: true }), odd),
          requestState: fc.oneof(fc.string({ maxLength: 60 }), fc.constant('mcpgw1.e30.' + 'A'.repeat(43)), odd),
          inputResponses: odd,
          protocolVersion: fc.oneof(
            fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', VERSION),
            odd,
          ),
          capabilities: fc.oneof(fc.constant({}), fc.constant({ elicitation: {}, roots: { listChanged: true } }), odd),
          clientInfo: fc.oneof(fc.constant({ name: 'fuzz', version: '1' }), odd),
          _meta: meta,
          constructor: odd,
          toString: odd,
        },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: odd },
  );

interface RpcShape {
  jsonrpc?: string;
  id?: string;
  method?: unknown;
  params?: unknown;
  /** A "__proto__" key written into params (JSON.parse makes it an own property). */
  proto?: string;
}

/** A JSON-RPC-shaped body, as text; each part may be missing or of the wrong type. */
export const rpcTextFor = (methods: readonly string[], meta: fc.Arbitrary<unknown>): fc.Arbitrary<string> =>
  fc
    .record(
      {
        jsonrpc: fc.oneof(
          { weight: 8, arbitrary: fc.constant('"2.0"') },
          { weight: 1, arbitrary: fc.constantFrom('"1.0"', '2', '2.0', 'null', '"2.0 "', '{}') },
        ),
        id: idText,
        method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: odd }),
        params: paramsFor(meta),
        proto: fc.constantFrom(
          '{"polluted":true}',
          '{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}',
          'null',
          '[]',
        ),
      },
      { requiredKeys: ['jsonrpc', 'method'] },
    )
    .map((shape: RpcShape) => {
      const parts: string[] = [];
      if (shape.jsonrpc !== undefined) parts.push(`"jsonrpc":${shape.jsonrpc}`);
      if (shape.id !== undefined) parts.push(`"id":${shape.id}`);
      parts.push(`"method":${JSON.stringify(shape.method) ?? 'null'}`);
      let params = shape.params === undefined ? undefined : JSON.stringify(shape.params);
      if (params?.startsWith('{') && shape.proto !== undefined)
        params = `{"__proto__":${shape.proto}${params === '{}' ? '' : ','}${params.slice(1)}`;
      if (params !== undefined) parts.push(`"params":${params}`);
      return `{${parts.join(',')}}`;
    });
export const rpcText = rpcTextFor(METHODS, metaArb);

/** Huge strings in the places a gateway might copy them: some fit under maxBodyBytes, some do not. */
export const hugeText = fc
  .record({
    size: fc.constantFrom(64 * 1024, 600 * 1024, MAX_BODY - 1024, MAX_BODY + 1, 3 * MAX_BODY),
    where: fc.constantFrom('text', 'name', 'meta', 'id', 'cursor', 'method', 'key'),
    char: fc.constantFrom('x', 'é', '😀', '\\u0000', '"', '\u2028'),
  })
  .map(({ size, where, char }) => {
    const unit = char === '"' ? '\\"' : char;
    const huge = unit.repeat(Math.max(1, Math.floor(size / Buffer.byteLength(unit))));
    const meta = JSON.stringify(META).slice(0, -1);
    const name = where === 'name' ? `"${huge}"` : '"r__echo"';
    const id = where === 'id' ? `"${huge}"` : '7';
    const method = where === 'method' ? `"${huge}"` : '"tools/call"';
    const args = where === 'text' ? `{"text":"${huge}"}` : where === 'key' ? `{"${huge}":1}` : '{"text":"t"}';
    const extra = where === 'meta' ? `,"com.example/huge":"${huge}"` : '';
    const cursor = where === 'cursor' ? `,"cursor":"${huge}"` : '';
    return (
      `{"jsonrpc":"2.0","id":${id},"method":${method},"params":{"name":${name},"arguments":${args}${cursor},` +
      `"_meta":${meta}${extra}}}}`
    );
  });

/** Batches of JSON-RPC-shaped messages (the revision has none; each must be refused as a whole). */
export const batchText = fc
  .array(
    fc.oneof(
      rpcText,
      fc.constant(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'r__echo', arguments: { text: 'b' }, _meta: META },
        }),
      ),
    ),
    {
      minLength: 0,
      maxLength: 5,
    },
  )
  .map((items) => `[${items.join(',')}]`);

type Choice<T> = { kind: 'right' } | { kind: 'absent' } | { kind: 'value'; value: T };
const choice = <T>(values: fc.Arbitrary<T>, right = 6, absent = 1, other = 2): fc.Arbitrary<Choice<T>> =>
  fc.oneof(
    { weight: right, arbitrary: fc.constant<Choice<T>>({ kind: 'right' }) },
    { weight: absent, arbitrary: fc.constant<Choice<T>>({ kind: 'absent' }) },
    { weight: other, arbitrary: values.map((value): Choice<T> => ({ kind: 'value', value })) },
  );

export const envelopeArb = fc.record({
  method: fc.oneof(
    { weight: 12, arbitrary: fc.constant('POST') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'GET',
        'HEAD',
        'PUT',
        'DELETE',
        'PATCH',
        'OPTIONS',
        'PROPFIND',
        'SEARCH',
        'PURGE',
        'TRACE',
      ),
    },
  ),
  path: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('/mcp', '/servers/r/mcp') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/servers/nope/mcp',
        '/mcp/',
        '/servers/r/mcp/',
        '/MCP',
        '/servers/r%2Fx/mcp',
        '/servers//mcp',
        '/mcp?x=1',
        '/servers/r/mcp?cursor=1',
        '/nothing',
        '/servers/r',
        '/servers/__proto__/mcp',
        '/servers/constructor/mcp',
        '/.well-known/oauth-protected-resource',
        '/mcp%00',
        '/%2e%2e/mcp',
      ),
    },
  ),
  contentType: choice(
    fc.oneof(
      fc.constantFrom(
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json, text/plain',
        'text/plain',
        '',
        'application/json-seq',
        'multipart/form-data; boundary=x',
        'application/jsonx',
        ' application/json',
      ),
      headerText,
    ),
  ),
  accept: choice(
    fc.oneof(
      fc.constantFrom(
        '*/*',
        'application/json',
        'text/event-stream',
        'application/*, text/*',
        'text/event-stream, application/json;q=0',
        '',
        'image/png',
      ),
      headerText,
    ),
  ),
  version: choice(
    fc.oneof(
      fc.constantFrom('2025-06-18', '2026-07-28 ', '', VERSION.toUpperCase(), '2026-07-28, 2026-07-28'),
      headerText,
    ),
  ),
  mcpMethod: choice(fc.oneof(fc.constantFrom(...METHODS.filter((m) => m.length < 100)), headerText)),
  mcpName: choice(
    fc.oneof(
      fc.constantFrom(
        '=?base64?*?=',
        '=?base64?cl9fZWNobw?=',
        '=?base64??=',
        '=?BASE64?cl9fZWNobw==?=',
        '=?base64?/w==?=',
        'r__echo ',
        ' r__echo',
      ),
      headerText,
      headerText.map(b64),
    ),
    6,
    2,
    3,
  ),
  nameAsBase64: fc.boolean(),
  origin: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ALLOWED_ORIGIN,
        'http://localhost:3000',
        'http://127.0.0.1',
        'https://evil.example',
        'null',
        'http://localhost.evil.example',
        'http://127.0.0.1.nip.io',
        'file://',
        `${ALLOWED_ORIGIN}, https://evil.example`,
        'HTTPS://ALLOWED.EXAMPLE/',
      ),
    },
    { weight: 1, arbitrary: headerText },
  ),
  extra: fc.dictionary(
    fc.constantFrom(
      'mcp-param-region',
      'mcp-param-x',
      'x-mcp-gateway-forwarded',
      'authorization',
      'last-event-id',
      'x-forwarded-for',
      'host-x',
    ),
    headerText,
    {
      maxKeys: 2,
    },
  ),
  chunked: fc.boolean(),
});
export type Envelope = typeof envelopeArb extends fc.Arbitrary<infer T> ? T : never;

/** The headers and request line for a body: what a conforming client would send, then mutated. */
export function build(envelope: Envelope, body: Buffer): Sent {
  const request = (() => {
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  })();
  const asked =
    request !== null && typeof request === 'object' && !Array.isArray(request) ? (request as Record<string, any>) : {};
  const rpcMethod = typeof asked.method === 'string' ? asked.method : undefined;
  const nameParam =
    rpcMethod === 'resources/read'
      ? asked.params?.uri
      : rpcMethod === 'tools/call' || rpcMethod === 'prompts/get'
        ? asked.params?.name
        : undefined;
  const plain = typeof nameParam === 'string' && /^[\x21-\x7e]+$/.test(nameParam);
  const rightName =
    typeof nameParam === 'string' ? (plain && !envelope.nameAsBase64 ? nameParam : b64(nameParam)) : undefined;
  const rightVersion =
    typeof asked.params?._meta?.['io.modelcontextprotocol/protocolVersion'] === 'string'
      ? asked.params._meta['io.modelcontextprotocol/protocolVersion']
      : VERSION;
  const rightMethod = rpcMethod !== undefined && /^[\x21-\x7e]*$/.test(rpcMethod) ? rpcMethod : 'tools/call';
  const headers: Record<string, string> = {};
  const put = (name: string, picked: Choice<string>, right: string | undefined): void => {
    if (picked.kind === 'value') headers[name] = picked.value;
    else if (picked.kind === 'right' && right !== undefined) headers[name] = right;
  };
  put('content-type', envelope.contentType, 'application/json');
  put('accept', envelope.accept, 'application/json, text/event-stream');
  put('mcp-protocol-version', envelope.version, /^[\x20-\x7e]*$/.test(rightVersion) ? rightVersion : VERSION);
  put('mcp-method', envelope.mcpMethod, rightMethod);
  put('mcp-name', envelope.mcpName, rightName);
  // No client can send a header Node's server would refuse as too large (431): a huge name goes without one.
  for (const [name, value] of Object.entries(headers)) if (value.length > 8 * 1024) delete headers[name];
  if (envelope.origin !== undefined) headers.origin = envelope.origin;
  Object.assign(headers, envelope.extra);
  return { method: envelope.method, path: envelope.path, headers, body, chunked: envelope.chunked };
}
