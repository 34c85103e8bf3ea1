// Starts tracing when the config or the environment asks for it. The OpenTelemetry SDK is imported here
// and only then, so a gateway that does not trace never loads it.
import type { TelemetryConfig } from './config.js';
import type { Log } from '../../infra/log.js';
import { tracingSettings } from './settings.js';
import type { GatewayTracer } from './tracer.js';

export async function startTracing(
  config: TelemetryConfig,
  env: NodeJS.ProcessEnv,
  log: Log,
): Promise<GatewayTracer | undefined> {
  const settings = tracingSettings(config, env);
  if (!settings) return undefined;
  const { createTracer } = await import('./otel-tracer.js');
  const tracer = await createTracer(settings, log, config.traces.acceptParents);
  log.info(
    { url: settings.url, protocol: settings.protocol, sampler: settings.sampler, service: settings.serviceName },
    'tracing on: spans go to an OTLP/HTTP collector',
  );
  return tracer;
}
