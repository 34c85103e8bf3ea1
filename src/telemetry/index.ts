// src/telemetry/: tracing: the telemetry: key's schema, the tracer's interface and a request's attributes (no
// SDK in any of them), and startTracing, which loads the OpenTelemetry SDK inside this folder only when
// tracing is on.
export { callAttributes, spanName } from './attributes.js';
export { telemetry } from './config.js';
export { startTracing } from './start.js';
export type { ForwardTrace, GatewayTracer, RequestSpan } from './tracer.js';
