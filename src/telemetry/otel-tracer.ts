// The OpenTelemetry SDK behind GatewayTracer: a tracer provider of its own, a batching OTLP/HTTP exporter
// (JSON or protobuf), the sampler the settings name. Loaded by start.ts only when tracing is on. No global
// context manager: every child span is started under its request's context, passed explicitly, and log
// lines get their ids from the edge, which holds the span (an AsyncLocalStorage context would turn on
// promise hooks for every promise in the process, about a sixth of a traced call's CPU on Node 20).
import {
  diag,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Log } from '../../infra/log.js';
import { GATEWAY_INFO } from '../../infra/version.js';
import { textOf } from '../../protocol/exact-json.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { TraceAttributes, UpstreamTrace } from '../../protocol/request-trace.js';
import { callAttributes, spanName } from './attributes.js';
import { withoutCapabilityLinks } from '../../protocol/capability-links.js';
import { probeCollector, reportExportErrors } from './collector-reach.js';
import { BATCH_DEFAULTS, type BatchSettings, type TracingSettings } from './settings.js';
import type { AcceptParents, ForwardTrace, GatewayTracer, RequestSpan } from './tracer.js';

const propagator = new W3CTraceContextPropagator();
const carrierGetter = {
  keys: (carrier: Record<string, string | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | undefined>, key: string) => carrier[key],
};

/**
 * The longest string any span or event attribute keeps (the SDK cuts longer ones): many are taken from the
 * request (names, URIs, ids, headers), and an unauthenticated caller must not fill a collector with them.
 */
export const MAX_ATTRIBUTE_LENGTH = 512;

export async function createTracer(
  settings: TracingSettings,
  log: Log,
  acceptParents: AcceptParents = 'authenticated',
): Promise<GatewayTracer> {
  setDiagLogger(log);
  reportExportErrors(log, settings.url);
  void probeCollector(log, settings.url);
  const batch = settings.batch ?? BATCH_DEFAULTS;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': GATEWAY_INFO.version }),
    sampler: samplerOf(settings),
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterOf(settings, batch), ...batch })],
  });
  const tracer = provider.getTracer(GATEWAY_INFO.name, GATEWAY_INFO.version);
  return {
    acceptParents,
    startRequest(start) {
      const parent =
        start.traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(
              ROOT_CONTEXT,
              { traceparent: start.traceparent, tracestate: start.tracestate },
              carrierGetter,
            );
      // Attributes set after the start, not passed to it: the SDK copies start attributes twice (for the
      // sampler, which none of ours reads) before setting them one by one anyway.
      const span = tracer.startSpan(start.name, { kind: SpanKind.SERVER, startTime: start.startedAt }, parent);
      span.setAttributes(start.attributes);
      return new OtelRequestSpan(tracer, span);
    },
    shutdown: () => provider.shutdown(),
  };
}

class OtelRequestSpan implements RequestSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** The parent of this request's client spans, made by the first (a cached answer or a refusal has none). */
  private parent: Context | undefined = undefined;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {
    const ids = span.spanContext();
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
  }

  private get context(): Context {
    return (this.parent ??= trace.setSpan(ROOT_CONTEXT, this.span));
  }

  setAttribute(key: string, value: string | number | boolean): void {
    this.span.setAttribute(key, value);
  }

  event(name: string, attributes?: TraceAttributes): void {
    this.span.addEvent(name, attributes);
  }

  fail(errorType: string, description?: string): void {
    this.span.setAttribute('error.type', errorType);
    // A connect error's message carries the caller's single-use link: never into a trace.
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: withoutCapabilityLinks(description) });
  }

  end(): void {
    this.span.end();
  }

  upstream(server: string, transport: 'stdio' | 'http', message: JsonRpcRequest): UpstreamTrace {
    const span = this.tracer.startSpan(spanName(message), CLIENT_SPAN, this.context);
    span.setAttributes(callAttributes(message));
    span.setAttribute('mcp.server.name', server);
    span.setAttribute('network.transport', transport === 'stdio' ? 'pipe' : 'tcp');
    return new OtelUpstreamCall(span);
  }

  forward(holder: string, url: string, message: JsonRpcRequest): ForwardTrace {
    const span = this.tracer.startSpan(spanName(message), CLIENT_SPAN, this.context);
    span.setAttributes(callAttributes(message));
    span.setAttribute('mcp.gateway.forwarded_to', holder);
    const holderUrl = URL.canParse(url) ? new URL(url) : undefined;
    if (holderUrl) {
      span.setAttribute('server.address', holderUrl.hostname);
      if (holderUrl.port !== '') span.setAttribute('server.port', Number(holderUrl.port));
    }
    span.setAttribute('http.request.method', 'POST');
    span.setAttribute('network.transport', 'tcp');
    return new OtelForward(span);
  }
}

/** A client span whose context goes along with the call it times (a class rather than a closure per call). */
abstract class PropagatedSpan {
  readonly traceparent: string;
  readonly tracestate: string | undefined;

  constructor(protected readonly span: Span) {
    const ids = span.spanContext();
    this.traceparent = traceparentOf(ids);
    this.tracestate = ids.traceState?.serialize() || undefined;
  }
}

/** A retry forwarded to the replica holding its call: an HTTP client span. */
class OtelForward extends PropagatedSpan implements ForwardTrace {
  end(status: number | undefined): void {
    const span = this.span;
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (status === undefined || status >= 500) {
      span.setAttribute('error.type', status === undefined ? 'unreachable' : String(status));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: status === undefined ? 'the replica holding the call could not be reached' : undefined,
      });
    }
    span.end();
  }
}

const CLIENT_SPAN = Object.freeze({ kind: SpanKind.CLIENT });

/** One upstream call's client span. */
class OtelUpstreamCall extends PropagatedSpan implements UpstreamTrace {
  end(response: JsonRpcResponse): void {
    const span = this.span;
    if ('error' in response) {
      const code = textOf(response.error.code); // an upstream's code may be a number kept as written
      span.setAttribute('error.type', code);
      span.setAttribute('rpc.response.status_code', code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: withoutCapabilityLinks(response.error.message) });
    }
    span.end();
  }
}

function traceparentOf(ids: SpanContext): string {
  return `00-${ids.traceId}-${ids.spanId}-${
    (ids.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'
  }`;
}

function samplerOf(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

async function exporterOf(settings: TracingSettings, batch: BatchSettings): Promise<SpanExporter> {
  // On shutdown the processor exports its whole queue at once, one request per batch: the exporter's own
  // limit (30) would refuse the rest of a full queue of small batches.
  const concurrencyLimit = Math.max(30, Math.ceil(batch.maxQueueSize / batch.maxExportBatchSize) + 1);
  const options = { url: settings.url, headers: settings.headers, concurrencyLimit };
  if (settings.protocol === 'http/json')
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options);
}

/** Once per process: the SDK's own complaints (a full queue, a failed export) go to the gateway's log. */
let diagSet = false;
function setDiagLogger(log: Log): void {
  if (diagSet) return;
  diagSet = true;
  diag.setLogger({
    error: (m) => log.warn({ otel: m }, 'OpenTelemetry'),
    warn: (m) => log.warn({ otel: m }, 'OpenTelemetry'),
    info() {},
    debug() {},
    verbose() {},
  });
}
