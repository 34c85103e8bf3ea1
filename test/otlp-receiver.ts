// An OTLP/HTTP trace receiver in process, on loopback: it takes what an exporter posts to /v1/traces, as
// JSON or protobuf, and keeps each span in one plain shape. The protobuf side decodes the few fields of
// opentelemetry/proto/trace/v1/trace.proto the tests read, by field number, with a reader of its own.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client (SpanKind in the proto, which counts from UNSPECIFIED = 0). */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): exporters post to <url>/v1/traces. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the posts received, in order. */
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const body = await readAll(req);
    const type = req.headers['content-type'] ?? '';
    contentTypes.push(type);
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    spans.push(
      ...(type.startsWith('application/json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)),
    );
    res.writeHead(200, {
      'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf',
    });
    res.end(type.startsWith('application/json') ? '{}' : Buffer.alloc(0));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}

// ---- OTLP/JSON ------------------------------------------------------------------------------------

function fromJson(request: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          attributes: jsonAttributes(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
          resource,
        });
      }
    }
  }
  return out;
}

function jsonAttributes(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? [])
    out[key] =
      value.stringValue ??
      value.boolValue ??
      (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue);
  return out;
}

// ---- OTLP/protobuf --------------------------------------------------------------------------------

type Field = { no: number; bytes?: Buffer; int?: bigint };

/** The fields of one message: varints as bigint, length-delimited and fixed as bytes. */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, int: varint() });
    else if (wire === 1) out.push({ no, bytes: buf.subarray(at, at + 8) }), (at += 8);
    else if (wire === 5) out.push({ no, bytes: buf.subarray(at, at + 4) }), (at += 4);
    else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, bytes: buf.subarray(at, at + length) });
      at += length;
    } else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  return out;
}

const each = (buf: Buffer, no: number): Buffer[] =>
  fields(buf)
    .filter((f) => f.no === no)
    .map((f) => f.bytes!);
const first = (buf: Buffer, no: number): Field | undefined => fields(buf).find((f) => f.no === no);
const text = (buf: Buffer, no: number): string => first(buf, no)?.bytes?.toString('utf8') ?? '';
const hex = (buf: Buffer, no: number): string => first(buf, no)?.bytes?.toString('hex') ?? '';

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of each(body, 1)) {
    const resourceBytes = first(rs, 1)?.bytes;
    const resource = resourceBytes ? protoAttributes(each(resourceBytes, 1)) : {};
    for (const ss of each(rs, 2)) {
      for (const s of each(ss, 2)) {
        const status = first(s, 15)?.bytes;
        out.push({
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: text(s, 5),
          kind: Number(first(s, 6)?.int ?? 0n),
          attributes: protoAttributes(each(s, 9)),
          events: each(s, 11).map((e) => ({ name: text(e, 2), attributes: protoAttributes(each(e, 3)) })),
          status: { code: status ? Number(first(status, 3)?.int ?? 0n) : 0, message: status ? text(status, 2) : '' },
          resource,
        });
      }
    }
  }
  return out;
}

function protoAttributes(pairs: Buffer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const value = first(pair, 2)?.bytes;
    const v = value ? fields(value)[0] : undefined;
    out[text(pair, 1)] = !v
      ? undefined
      : v.no === 1
        ? v.bytes!.toString('utf8')
        : v.no === 2
          ? v.int === 1n
          : v.no === 3
            ? Number(BigInt.asIntN(64, v.int!))
            : v.no === 4
              ? v.bytes!.readDoubleLE(0)
              : undefined;
  }
  return out;
}
