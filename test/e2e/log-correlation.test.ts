// Log correlation without an async context (issue #19): a traced request's log line and its audit line
// carry the trace_id and span_id of its server span, handed to them by the code that holds the span, and
// untraced they carry none. The request logs a line of its own because one of the two servers behind /mcp
// cannot start, so the list is answered without it. With tracing off no OpenTelemetry SDK module is loaded:
// that case runs first, before the traced gateway of the second case loads the SDK into this process.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send, recordingServer } from './harness.js';
import { writtenLog } from '../recording-log.js';

const SERVER = 2;
const GAP = 'answered a list on /mcp without one upstream';
const TRACE = 'a1b2c3d4'.repeat(4);
const CALLER_SPAN = 'c3d4e5f6'.repeat(2);
const KEY = 'log-correlation-test-key-0123';

interface Run {
  lines: any[];
  audit: any[];
}

/** A gateway over a working server and one that exits at once; one tools/list on /mcp, its log and audit lines. */
async function listWithAGap(telemetry: Record<string, unknown> | undefined): Promise<Run> {
  const dir = tempDir('mcp-gateway-log-correlation-');
  const auditFile = path.join(dir, 'audit.jsonl');
  const written = writtenLog('info');
  const servers = {
    rec: recordingServer(path.join(dir, 'received.jsonl')),
    down: { command: process.execPath, args: ['-e', 'process.exit(1)'], timeoutMs: 1_000 },
  };
  const config = parseConfig(
    {
      listen: { port: 0 },
      servers,
      aggregate: { listDeadlineMs: 1_000 },
      // Audit lines are written where there is something to decide: with authentication or policies.
      auth: { apiKeys: [{ key: KEY, principal: 'tester' }] },
      audit: { destination: auditFile },
      ...(telemetry && { telemetry }),
    },
    'test',
    ROOT,
  );
  const gateway: RunningGateway = await startGateway(config, written.logger);
  try {
    const list = request('tools/list', {}, 'list-1');
    const answer = await send(`${gateway.url}/mcp`, list, {
      authorization: `Bearer ${KEY}`,
      traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  } finally {
    await gateway.close(); // exports what tracing buffered
  }
  const audit = readFileSync(auditFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return { lines: written.records(), audit };
}

function gapLine(run: Run): any {
  const line = run.lines.find((l) => l.msg === GAP);
  assert.ok(line, `no "${GAP}" line among ${run.lines.map((l) => l.msg).join(' | ')}`);
  return line;
}

function auditLine(run: Run): any {
  const line = run.audit.find((l) => l.method === 'tools/list');
  assert.ok(line, JSON.stringify(run.audit));
  return line;
}

describe('log correlation', () => {
  it(
    'with tracing off: ' + 'no ids on the request log line or the audit line, and no OpenTelemetry module loaded',
    async () => {
      const run = await listWithAGap(undefined);
      assert.equal(gapLine(run).trace_id, undefined);
      assert.equal(gapLine(run).span_id, undefined);
      assert.equal(auditLine(run).span_id, undefined);
      assert.equal(auditLine(run).trace_id, undefined);
      // The OpenTelemetry packages are CommonJS: whatever loads them, they land in the one require cache. The
      // API alone is there anyway, as prom-client requires it for its exemplars; the SDK, the exporters and
      // what the gateway's tracer imports with them are not.
      const otel = `${path.sep}node_modules${path.sep}@opentelemetry${path.sep}`;
      const packages = new Set(
        Object.keys(createRequire(import.meta.url).cache)
          .filter((file) => file.includes(otel))
          .map((file) => file.slice(file.indexOf(otel) + otel.length).split(path.sep)[0]),
      );
      packages.delete('api');
      assert.deepEqual([...packages], []);
    },
  );

  it('with tracing on: the request log line and the audit line carry the ids of the request span', async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    let run: Run;
    try {
      run = await listWithAGap({ traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } });
    } finally {
      await receiver.close();
    }
    const span = receiver.spans.find((s) => s.traceId === TRACE && s.kind === SERVER);
    assert.ok(span, JSON.stringify(receiver.spans.map((s) => [s.traceId, s.kind, s.name])));
    assert.notEqual(span.spanId, CALLER_SPAN, 'the ids are the gateway span, not the caller');
    for (const line of [gapLine(run), auditLine(run)]) {
      assert.equal(line.trace_id, TRACE);
      assert.equal(line.span_id, span.spanId);
    }
    // Lines written outside any request (start, stop) name none.
    assert.ok(run.lines.some((l) => l.msg !== GAP && l.trace_id === undefined));
  });
});
