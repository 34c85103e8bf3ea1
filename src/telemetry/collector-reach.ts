// What an operator sees when the collector cannot be reached: one plain line, soon. The SDK reports a
// failed export through its global error handler as a JSON string with a stack, and only once its retries
// give up (about 10 s after the batch was due). So: at start one connection attempt to the collector (a
// line at once when nothing answers there), and every export failure as one line naming the setting.
import { connect } from 'node:net';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import type { Log } from '../../infra/log.js';

/** How long the start-up check waits for the collector to accept a connection. */
const PROBE_TIMEOUT_MS = 3000;

/** The SDK's failed exports (and its other errors) as one warn line each, naming where spans go. */
export function reportExportErrors(log: Log, url: string): void {
  setGlobalErrorHandler((error) =>
    log.warn(
      { collector: url },
      `OpenTelemetry export to ${url} failed: ${oneLine(error)}; check telemetry.traces.endpoint (or ` +
        `OTEL_EXPORTER_OTLP_ENDPOINT)`,
    ),
  );
}

/**
 * Tries once to open a connection to the collector and logs one warn line when that fails: spans are then
 * dropped (the gateway serves on) until it answers. Resolves when the attempt is over; never rejects.
 */
export function probeCollector(log: Log, url: string): Promise<void> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(); // the config schema checks the URL; the exporter reports what it makes of it
  }
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (problem?: string) => {
      socket.destroy();
      if (problem !== undefined)
        log.warn(
          { collector: url },
          `OpenTelemetry collector at ${url} cannot be reached (${problem}); spans are dropped until it answers; ` +
            `check telemetry.traces.endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)`,
        );
      resolve();
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(`no connection within ${PROBE_TIMEOUT_MS / 1000} s`));
    socket.once('connect', () => done());
    socket.once('error', (error) => done(oneLine(error)));
  });
}

/** An error as one line: its code and the first line of its message, never a stack or a JSON dump. */
export function oneLine(error: unknown): string {
  if (!(error instanceof Error))
    return String(typeof error === 'string' ? error : JSON.stringify(error)).split('\n')[0]!;
  const code = (error as { code?: unknown }).code;
  const message = (error.message.split('\n')[0] ?? '').trim() || error.name;
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
