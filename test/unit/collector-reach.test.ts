// Issue 36: a collector nobody listens at is reported as one plain line, at start (not as the SDK's JSON
// string with a stack once its retries give up, about 10 s after the first batch), and every later export
// failure is one line naming the setting too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { globalErrorHandler } from '@opentelemetry/core';
import { createTracer } from '../../src/telemetry/otel-tracer.js';
import { BATCH_DEFAULTS } from '../../src/telemetry/settings.js';
import { unusedPort } from '../ports.js';
import { recordingLog } from '../recording-log.js';

test('an unreachable collector: one warn line at start, and export failures as one line each', {
  timeout: 8000,
}, async () => {
  const url = `http://127.0.0.1:${await unusedPort()}/v1/traces`;
  const { log, lines } = recordingLog();
  let warned!: () => void;
  const firstWarning = new Promise<void>((resolve) => (warned = resolve));
  const recording = { ...log, warn: (obj: object, msg?: string) => (log.warn(obj, msg), warned()) };
  recording.child = () => recording;
  // A batch delay far beyond the test: no export is attempted, so the line can only come from the start.
  const tracer = await createTracer(
    {
      url,
      protocol: 'http/json',
      headers: {},
      sampler: 'always_on',
      ratio: 1,
      serviceName: 'reach-test',
      batch: { ...BATCH_DEFAULTS, scheduledDelayMillis: 600_000 },
    },
    recording,
  );
  try {
    await firstWarning; // the test's timeout is the bound: the SDK alone says nothing here for minutes
    const [start] = lines.filter((line) => line.level === 'warn');
    assert.match(
      start!.msg,
      new RegExp(`^OpenTelemetry collector at ${url.replace(/\./g, '\\.')} cannot be reached \\(connect ECONNREFUSED`),
    );
    assert.match(start!.msg, /telemetry\.traces\.endpoint/);
    assert.doesNotMatch(start!.msg, /\n/);

    // What the SDK hands its global error handler when an export fails: an error with a stack.
    const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9\n    at TCPConnectWrap.afterConnect'), {
      code: 'ECONNREFUSED',
    });
    globalErrorHandler(failure);
    const last = lines.at(-1)!;
    assert.equal(last.level, 'warn');
    assert.equal(
      last.msg,
      `OpenTelemetry export to ${url} failed: connect ECONNREFUSED 127.0.0.1:9; check telemetry.traces.endpoint (or ` +
        `OTEL_EXPORTER_OTLP_ENDPOINT)`,
    );
    assert.doesNotMatch(JSON.stringify(last), /\bat \w|\\n|stack/);
  } finally {
    await tracer.shutdown();
  }
});
