// The telemetry: key against the OTEL_* variables (which wins, when tracing is on at all), and the pretty log
// format. Log lines of a traced request carrying its ids: test/e2e/log-correlation.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { telemetry } from '../../src/telemetry/config.js';
import { logDestination } from '../../infra/logger.js';
import { tracingSettings } from '../../src/telemetry/settings.js';

const config = (value: unknown = {}) => telemetry.parse(value);
/** The batch sizes docs/configuration.md documents as the defaults (OTEL_BSP_*), written down here. */
const DOCUMENTED_BATCH = {
  maxQueueSize: 4096,
  maxExportBatchSize: 256,
  scheduledDelayMillis: 5000,
  exportTimeoutMillis: 30_000,
};

describe('tracing settings', () => {
  it('is off unless the config or an OTLP endpoint variable asks for it', () => {
    assert.equal(tracingSettings(config(), {}), undefined);
    assert.equal(tracingSettings(config(), { OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }), undefined);
    assert.equal(
      tracingSettings(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
      undefined,
    );
    assert.equal(
      tracingSettings(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })?.url,
      'http://c:4318/v1/traces',
    );
    assert.equal(tracingSettings(config({ traces: { enabled: true } }), {})?.url, 'http://localhost:4318/v1/traces');
  });

  it('lets OTEL_SDK_DISABLED and enabled: false switch it off whatever else says', () => {
    assert.equal(
      tracingSettings(config({ traces: { endpoint: 'http://c:4318' } }), { OTEL_SDK_DISABLED: 'true' }),
      undefined,
    );
    assert.equal(
      tracingSettings(config({ traces: { enabled: false } }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
      undefined,
    );
  });

  it('takes the variables the config leaves out, and the config where both speak', () => {
    const env = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env:4318/custom',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'from-env',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t,x-a=1',
    };
    assert.deepEqual(tracingSettings(config(), env), {
      url: 'http://env:4318/custom',
      protocol: 'http/json',
      headers: { authorization: 'Bearer t', 'x-a': '1' },
      sampler: 'traceidratio',
      ratio: 0.25,
      serviceName: 'from-env',
      batch: DOCUMENTED_BATCH,
    });
    const mine = config({
      serviceName: 'mine',
      traces: {
        endpoint: 'http://cfg:4318/',
        protocol: 'http/protobuf',
        sampler: 'always_on',
        headers: { 'x-a': '2' },
      },
    });
    assert.deepEqual(tracingSettings(mine, env), {
      url: 'http://cfg:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: { authorization: 'Bearer t', 'x-a': '2' },
      sampler: 'always_on',
      ratio: 0.25,
      serviceName: 'mine',
      batch: DOCUMENTED_BATCH,
    });
  });

  it('names the variable when its value is not supported', () => {
    assert.throws(
      () =>
        tracingSettings(config(), {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        }),
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc .*http\/protobuf, http\/json/,
    );
    assert.throws(
      () =>
        tracingSettings(config(), {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_TRACES_SAMPLER: 'jaeger_remote',
        }),
      /OTEL_TRACES_SAMPLER/,
    );
  });

  it('refuses a config value that is not supported', () => {
    assert.throws(() => config({ traces: { protocol: 'grpc' } }));
    assert.throws(() => config({ traces: { samplerRatio: 2 } }));
  });
});

describe('log output', () => {
  it('--log-format pretty finds pino-pretty (a dev dependency here)', async () => {
    assert.equal(typeof (await logDestination('pretty')).write, 'function');
  });
});
