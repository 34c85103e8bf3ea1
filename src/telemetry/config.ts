// The telemetry: key: where traces go and how many are kept. Each key stands for one of the standard
// OpenTelemetry variables (src/telemetry/settings.ts maps them); a key set here wins over its variable.
import { z } from 'zod';

/** true/false, also from ${VAR} expansion (as in config.ts). */
const bool = () => z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());
const ratio = z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().min(0).max(1));
const url = z
  .string()
  .regex(/^https?:\/\/[^\s]+$/, 'give an http:// or https:// URL, for example http://127.0.0.1:4318');

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
/** Whose incoming trace context (traceparent header or _meta) a request's span may take as its parent. */
export const ACCEPT_PARENTS = ['authenticated', 'any', 'none'] as const;

export const telemetry = z.strictObject({
  traces: z
    .strictObject({
      /**
       * false turns tracing off whatever the environment says; true turns it on (to localhost:4318 unless an endpoint
       * is given).
       */
      enabled: bool().optional(),
      /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; /v1/traces is appended. */
      endpoint: url.optional(),
      /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL spans are posted to, used as given. */
      tracesEndpoint: url.optional(),
      /** OTEL_EXPORTER_OTLP_PROTOCOL (or _TRACES_PROTOCOL). */
      protocol: z.enum(OTLP_PROTOCOLS).optional(),
      /** OTEL_EXPORTER_OTLP_HEADERS (or _TRACES_HEADERS): for a collector that wants a token. */
      headers: z.record(z.string(), z.string()).optional(),
      /** OTEL_TRACES_SAMPLER. */
      sampler: z.enum(SAMPLERS).optional(),
      /** OTEL_TRACES_SAMPLER_ARG: the ratio of the *traceidratio samplers. */
      samplerRatio: ratio.optional(),
      /**
       * authenticated (default): a caller's traceparent is honoured once it authenticated (with auth: off,
       * every caller); any: also before; none: never (each request starts a trace; replicas' forwards still join).
       */
      acceptParents: z.enum(ACCEPT_PARENTS).default('authenticated'),
    })
    .prefault({}),
  /** OTEL_SERVICE_NAME (default mcp-gateway). */
  serviceName: z.string().min(1).optional(),
});

export type TelemetryConfig = z.infer<typeof telemetry>;
