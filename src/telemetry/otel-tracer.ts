// The OpenTelemetry SDK behind GatewayTracer: a tracer provider of its own (nothing global but the context
// manager, which log lines need to find the request they belong to), a batching OTLP/HTTP exporter (JSON
// or protobuf), the sampler the settings name. Loaded by start.ts only when tracing is on.
import { context, diag, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
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
import { setLogContext } from '../infra/log-context.js';
import type { Log } from '../infra/log.js';
import { GATEWAY_INFO } from '../infra/version.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';
import type { TraceAttributes, UpstreamTrace } from '../protocol/trace.js';
import { callAttributes, spanName } from './attributes.js';
import type { TracingSettings } from './settings.js';
import type { GatewayTracer, RequestSpan } from './tracer.js';

const propagator = new W3CTraceContextPropagator();
const carrierGetter = {
  keys: (carrier: Record<string, string | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | undefined>, key: string) => carrier[key],
};

export async function createTracer(settings: TracingSettings, log: Log): Promise<GatewayTracer> {
  installContextManager(log);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': GATEWAY_INFO.version }),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterOf(settings) })],
  });
  const tracer = provider.getTracer(GATEWAY_INFO.name, GATEWAY_INFO.version);
  return {
    startRequest(start) {
      const parent =
        start.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, { traceparent: start.traceparent, tracestate: start.tracestate }, carrierGetter);
      const span = tracer.startSpan(start.name, { kind: SpanKind.SERVER, startTime: start.startedAt, attributes: start.attributes }, parent);
      return new OtelRequestSpan(tracer, span);
    },
    shutdown: () => provider.shutdown(),
  };
}

class OtelRequestSpan implements RequestSpan {
  readonly traceId: string;
  readonly spanId: string;
  private readonly context: Context;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
  ) {
    const ids = span.spanContext();
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  setAttributes(attributes: TraceAttributes): void {
    this.span.setAttributes(attributes);
  }

  event(name: string, attributes?: TraceAttributes): void {
    this.span.addEvent(name, attributes);
  }

  fail(errorType: string, description?: string): void {
    this.span.setAttribute('error.type', errorType);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: description });
  }

  end(): void {
    this.span.end();
  }

  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  upstream(server: string, transport: 'stdio' | 'http', message: JsonRpcRequest): UpstreamTrace {
    const attributes = callAttributes(message);
    attributes['mcp.server.name'] = server;
    attributes['network.transport'] = transport === 'stdio' ? 'pipe' : 'tcp';
    const span = this.tracer.startSpan(spanName(message), { kind: SpanKind.CLIENT, attributes }, this.context);
    const ids = span.spanContext();
    return { traceparent: traceparentOf(ids), tracestate: ids.traceState?.serialize() || undefined, end: (response) => endUpstream(span, response) };
  }
}

function endUpstream(span: Span, response: JsonRpcResponse): void {
  if ('error' in response) {
    const code = String(response.error.code);
    span.setAttributes({ 'error.type': code, 'rpc.response.status_code': code });
    span.setStatus({ code: SpanStatusCode.ERROR, message: response.error.message });
  }
  span.end();
}

function traceparentOf(ids: SpanContext): string {
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`;
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

async function exporterOf(settings: TracingSettings): Promise<SpanExporter> {
  const options = { url: settings.url, headers: settings.headers };
  if (settings.protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options);
}

/** Once per process: the context manager is global, and log lines look the request's span up through it. */
let contextInstalled = false;
function installContextManager(log: Log): void {
  if (contextInstalled) return;
  contextInstalled = true;
  if (!context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())) {
    log.warn({}, 'another OpenTelemetry context manager is installed; log lines may miss their trace ids');
  }
  diag.setLogger({ error: (m) => log.warn({ otel: m }, 'OpenTelemetry'), warn: (m) => log.warn({ otel: m }, 'OpenTelemetry'), info() {}, debug() {}, verbose() {} });
  setLogContext(() => {
    const ids = trace.getSpanContext(context.active());
    return ids && { trace_id: ids.traceId, span_id: ids.spanId };
  });
}
