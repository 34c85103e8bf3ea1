// The batch span processor's sizes: the gateway's defaults, the OTEL_BSP_* variables that change them, and
// a value that is no count refused with the variable's name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { telemetry } from '../../src/telemetry/config.js';
import { BATCH_DEFAULTS, tracingSettings } from '../../src/telemetry/settings.js';

const ON = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
const settings = (env: Record<string, string>) => tracingSettings(telemetry.parse({}), { ...ON, ...env })!;

describe('batch span processor settings', () => {
  it('queue twice the SDK default and export in batches of 256', () => {
    assert.deepEqual(settings({}).batch, {
      maxQueueSize: 4096,
      maxExportBatchSize: 256,
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30_000,
    });
    assert.equal(BATCH_DEFAULTS.maxQueueSize, 4096);
  });

  it('take the OTEL_BSP_* variables', () => {
    const env = {
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '50',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_EXPORT_TIMEOUT: '1000',
    };
    assert.deepEqual(settings(env).batch, {
      maxQueueSize: 100,
      maxExportBatchSize: 50,
      scheduledDelayMillis: 200,
      exportTimeoutMillis: 1000,
    });
  });

  it('never make a batch larger than the queue', () => {
    assert.equal(settings({ OTEL_BSP_MAX_QUEUE_SIZE: '100' }).batch!.maxExportBatchSize, 100);
    assert.equal(
      settings({ OTEL_BSP_MAX_QUEUE_SIZE: '300', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5000' }).batch!.maxExportBatchSize,
      300,
    );
  });

  it('refuse a value that is no whole number above 0, naming the variable', () => {
    assert.throws(
      () => settings({ OTEL_BSP_MAX_QUEUE_SIZE: 'lots' }),
      /OTEL_BSP_MAX_QUEUE_SIZE=lots .*whole number above 0/,
    );
    assert.throws(() => settings({ OTEL_BSP_SCHEDULE_DELAY: '0' }), /OTEL_BSP_SCHEDULE_DELAY=0/);
    assert.throws(() => settings({ OTEL_BSP_EXPORT_TIMEOUT: '1.5' }), /OTEL_BSP_EXPORT_TIMEOUT=1.5/);
  });
});
