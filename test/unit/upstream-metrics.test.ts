// Per-upstream metrics (issue 19): the recent window behind the status page's charts, the duration
// histogram and its exemplars, errors by kind, the tool-name cap, the live gauges, and OpenMetrics beside
// the classic text from the same metrics.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { RequestOptions, Upstream } from '../../bridge/upstream.js';
import { MeteredUpstream } from '../../src/layers/metered-upstream.js';
import { GatewayMetrics, type LiveCounts } from '../../src/ops/metrics.js';
import { wantsOpenMetrics } from '../../src/ops/open-metrics.js';
import { RecentWindow, SLOT_MS, SLOTS } from '../../src/ops/recent-window.js';
import { TOOL_LABEL_CAP, TOOL_OTHER } from '../../src/ops/upstream-metrics.js';
import { markFailure } from '../../protocol/failure-mark.js';
import { ErrorCode, errorResponse, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc.js';
import { overloadedResponse } from '../../protocol/overload.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A start time `seconds` before now, on the meters' clock. */
const ago = (seconds: number): number => performance.now() - seconds * 1000;

function make(live?: () => LiveCounts): GatewayMetrics {
  return new GatewayMetrics({
    upstreams: () => [],
    cache: () => ({ hits: 0, misses: 0, invalidations: 0, fetches: 0, storeErrors: 0 }),
    live,
    processMetrics: false,
  });
}

const call = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  ...(params && { params }),
});
const ok = (result: Record<string, unknown> = {}): JsonRpcResponse => ({ jsonrpc: '2.0', id: 1, result });
const failed = (): JsonRpcResponse => errorResponse(1, ErrorCode.InvalidParams, 'no such tool');

/** A sample's value from the classic text, labels in any order. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (
      Object.keys(have).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => have[k] === v)
    )
      return Number(match[3]);
  }
  return undefined;
}

test('the recent window: calls, errors and latency per 10 s slot over the last 5 minutes, oldest first', () => {
  const window = new RecentWindow();
  const t0 = 1_000 * SLOT_MS; // any slot boundary
  for (let i = 0; i < 19; i++) window.record(t0 + i, 4, false);
  window.record(t0 + 50, 400, true);
  window.record(t0 + SLOT_MS, 20, true);
  const now = t0 + SLOT_MS + 1;
  const traffic = window.snapshot(now);
  assert.equal(traffic.points.length, SLOTS);
  assert.equal(traffic.calls, 21);
  assert.equal(traffic.errors, 2);
  assert.equal(traffic.errorRate, 2 / 21);
  const [previous, newest] = traffic.points.slice(-2);
  assert.deepEqual(newest, { calls: 1, errors: 1, meanMs: 20, p95Ms: 25 });
  assert.equal(previous!.calls, 20);
  assert.equal(previous!.meanMs, (19 * 4 + 400) / 20);
  assert.equal(previous!.p95Ms, 5, 'the 19th of 20 calls (95%) took 4 ms: under the 5 ms bound');
  assert.ok(traffic.points.slice(0, -2).every((p) => p.calls === 0 && p.meanMs === undefined));

  // Five minutes on, those slots have left the window, and a slot reused by the ring starts from zero.
  const later = window.snapshot(now + SLOTS * SLOT_MS);
  assert.equal(later.calls, 0);
  assert.equal(later.errorRate, undefined);
  window.record(now + SLOTS * SLOT_MS, 1, false);
  assert.deepEqual(window.snapshot(now + SLOTS * SLOT_MS).points.at(-1), { calls: 1, errors: 0, meanMs: 1, p95Ms: 1 });
});

test('upstream duration by server and method (unknown methods as other), errors by kind', async () => {
  const metrics = make();
  const alpha = metrics.upstreamCalls.forServer('alpha');
  assert.equal(metrics.upstreamCalls.forServer('alpha'), alpha, 'one meter per server, kept');
  alpha.finished(call('tools/list'), ok(), ago(0.002), undefined, false);
  alpha.finished(call('tools/list'), ok(), ago(0.003), undefined, false);
  alpha.finished(call('x/made-up'), failed(), ago(0.001), undefined, false);
  alpha.finished(
    call('tools/call'),
    markFailure(errorResponse(1, ErrorCode.InternalError, 'no answer'), 'timeout'),
    ago(0.5),
    undefined,
    false,
  );
  alpha.finished(
    call('tools/call'),
    markFailure(errorResponse(1, ErrorCode.InternalError, 'exited'), 'unreachable'),
    ago(0.01),
    undefined,
    false,
  );
  alpha.finished(
    call('tools/call'),
    markFailure(errorResponse(1, ErrorCode.InternalError, 'HTTP 502'), 'bad_answer'),
    ago(0.01),
    undefined,
    false,
  );
  alpha.finished(call('tools/call'), overloadedResponse(1, 'busy', {}, 2), ago(0.01), undefined, false);
  alpha.finished(
    call('tools/call'),
    errorResponse(1, ErrorCode.InternalError, 'Request cancelled by the client'),
    ago(0.01),
    undefined,
    true,
  );
  const text = await metrics.render();
  const count = 'mcp_gateway_upstream_request_duration_seconds_count';
  assert.equal(sample(text, count, { server: 'alpha', method: 'tools/list' }), 2);
  assert.equal(sample(text, count, { server: 'alpha', method: 'other' }), 1);
  assert.equal(sample(text, count, { server: 'alpha', method: 'tools/call' }), 5);
  const errors = 'mcp_gateway_upstream_errors_total';
  assert.equal(sample(text, errors, { server: 'alpha', method: 'other', kind: 'jsonrpc' }), 1);
  for (const kind of ['timeout', 'unreachable', 'bad_answer', 'overloaded', 'cancelled']) {
    assert.equal(sample(text, errors, { server: 'alpha', method: 'tools/call', kind }), 1, kind);
  }
  assert.equal(
    sample(text, errors, { server: 'alpha', method: 'tools/list', kind: 'jsonrpc' }),
    undefined,
    'no error series without errors',
  );
  // The status page's window counts the failures, but not the call the caller abandoned.
  const recent = metrics.upstreamCalls.recent('alpha')!;
  assert.equal(recent.calls, 8);
  assert.equal(recent.errors, 5);
  assert.equal(metrics.upstreamCalls.recent('beta'), undefined);
});

test(
  `tool calls by tool and outcome, at most ${TOOL_LABEL_CAP} tool names; ` + 'unknown tools never take a place',
  async () => {
    const metrics = make();
    const alpha = metrics.upstreamCalls.forServer('alpha');
    const beta = metrics.upstreamCalls.forServer('beta');
    alpha.finished(call('tools/call', { name: 'echo' }), ok(), ago(0.001), undefined, false);
    alpha.finished(call('tools/call', { name: 'echo' }), ok({ isError: true }), ago(0.001), undefined, false);
    alpha.finished(call('tools/call', { name: 'echo' }), failed(), ago(0.001), undefined, false);
    // A caller inventing names: each is an error, and none is named.
    for (let i = 0; i < 3 * TOOL_LABEL_CAP; i++)
      alpha.finished(call('tools/call', { name: `junk-${i}` }), failed(), ago(0.001), undefined, false);
    // Real tools fill the remaining places (echo has one), across servers; the rest count as _other.
    for (let i = 0; i < TOOL_LABEL_CAP + 5; i++)
      beta.finished(call('tools/call', { name: `t${i}` }), ok(), ago(0.001), undefined, false);
    const text = await metrics.render();
    const tools = 'mcp_gateway_tool_calls_total';
    assert.equal(sample(text, tools, { server: 'alpha', tool: 'echo', outcome: 'ok' }), 1);
    assert.equal(sample(text, tools, { server: 'alpha', tool: 'echo', outcome: 'tool_error' }), 1);
    assert.equal(sample(text, tools, { server: 'alpha', tool: 'echo', outcome: 'error' }), 1);
    assert.equal(sample(text, tools, { server: 'alpha', tool: TOOL_OTHER, outcome: 'error' }), 3 * TOOL_LABEL_CAP);
    assert.equal(
      sample(text, tools, { server: 'beta', tool: `t${TOOL_LABEL_CAP - 2}`, outcome: 'ok' }),
      1,
      'the last place',
    );
    assert.equal(
      sample(text, tools, { server: 'beta', tool: `t${TOOL_LABEL_CAP - 1}`, outcome: 'ok' }),
      undefined,
      'past the cap',
    );
    assert.equal(sample(text, tools, { server: 'beta', tool: TOOL_OTHER, outcome: 'ok' }), 6);
    const names = new Set([...text.matchAll(/^mcp_gateway_tool_calls_total\{[^}]*tool="([^"]*)"/gm)].map((m) => m[1]));
    assert.equal(names.size, TOOL_LABEL_CAP + 1, `${TOOL_LABEL_CAP} names and ${TOOL_OTHER}`);
  },
);

test('exemplars carry the trace id in OpenMetrics; the classic text stays as it was, before and after', async () => {
  const metrics = make();
  const alpha = metrics.upstreamCalls.forServer('alpha');
  alpha.finished(call('tools/call', { name: 'echo' }), ok(), ago(0.003), TRACE, false);
  alpha.finished(call('tools/call', { name: 'echo' }), ok(), ago(0.004), undefined, false);
  const classicBefore = await metrics.render();
  const open = await metrics.renderOpenMetrics();
  const classicAfter = await metrics.render();
  assert.equal(classicAfter, classicBefore, 'rendering OpenMetrics changed nothing in the metrics');
  assert.doesNotMatch(classicAfter, /trace_id/);
  assert.match(classicAfter, /^# TYPE mcp_gateway_tool_calls_total counter$/m);

  assert.match(open, /# EOF\n$/);
  assert.match(open, /^# TYPE mcp_gateway_tool_calls counter$/m, 'OpenMetrics names the counter family without _total');
  assert.match(open, /^mcp_gateway_tool_calls_total\{server="alpha",tool="echo",outcome="ok"\} 2$/m);
  const exemplar = new RegExp(
    `^mcp_gateway_upstream_request_duration_seconds_bucket\\{le="0.005",server="alpha",method="tools/call"\\} 2 # ` +
      `\\{trace_id="${TRACE}"\\} 0\\.003\\d* \\d`,
    'm',
  );
  assert.match(open, exemplar);
  assert.equal(metrics.openMetricsContentType, 'application/openmetrics-text; version=1.0.0; charset=utf-8');

  assert.equal(
    wantsOpenMetrics('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'),
    true,
  );
  assert.equal(wantsOpenMetrics('text/plain'), false);
  assert.equal(wantsOpenMetrics(undefined), false);
});

test(
  'MeteredUpstream times the upstream, ' + 'takes the trace id from the request options, and passes the answer through',
  async () => {
    const metrics = make();
    let release!: (response: JsonRpcResponse) => void;
    const inner: Upstream = {
      name: 'alpha',
      events: new EventEmitter(),
      request: (_message: JsonRpcRequest, _options?: RequestOptions) => new Promise((resolve) => (release = resolve)),
      status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
      start: async () => {},
      close: async () => {},
    };
    const metered = new MeteredUpstream(inner, metrics.upstreamCalls.forServer('alpha'));
    const answer = ok({ tools: [] });
    const pending = metered.request(call('tools/list'), { traceId: TRACE });
    await new Promise((resolve) => setTimeout(resolve, 20));
    release(answer);
    assert.equal(await pending, answer, 'the same answer object');
    const open = await metrics.renderOpenMetrics();
    const sum =
      /^mcp_gateway_upstream_request_duration_seconds_sum\{server="alpha",method="tools\/list"\} (\S+)$/m.exec(open);
    assert.ok(sum && Number(sum[1]) >= 0.015, `timed the wait: ${sum?.[1]}`);
    assert.match(open, new RegExp(`trace_id="${TRACE}"`));
  },
);

test('MRTR holds, listen streams and cache bytes are read at scrape', async () => {
  const live: LiveCounts = { heldCalls: 2, listenStreams: 3, cacheBytes: 4096 };
  const metrics = make(() => live);
  let text = await metrics.render();
  assert.equal(sample(text, 'mcp_gateway_mrtr_held_calls', {}), 2);
  assert.equal(sample(text, 'mcp_gateway_listen_streams_open', {}), 3);
  assert.equal(sample(text, 'mcp_gateway_cache_bytes', {}), 4096);
  live.listenStreams = 0;
  text = await metrics.render();
  assert.equal(sample(text, 'mcp_gateway_listen_streams_open', {}), 0);
});
