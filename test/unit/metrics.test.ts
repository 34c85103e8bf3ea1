import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register as globalRegistry } from 'prom-client';
import { GatewayMetrics, methodLabel, type CacheSnapshot, type UpstreamSnapshot } from '../../src/ops/metrics.js';

interface Backing {
  upstreams: UpstreamSnapshot[];
  cache: CacheSnapshot;
}

function make(processMetrics = false): { metrics: GatewayMetrics; backing: Backing } {
  const backing: Backing = {
    upstreams: [],
    cache: { hits: 0, misses: 0, invalidations: 0, fetches: 0, storeErrors: 0 },
  };
  const metrics = new GatewayMetrics({
    upstreams: () => backing.upstreams,
    cache: () => backing.cache,
    processMetrics,
  });
  return { metrics, backing };
}

/** Sample lines of the exposition as `name{labels}` → value (labels as prom-client prints them, sorted here). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels = match[2]
      ? match[2]
          .split(/,(?=[a-zA-Z_][a-zA-Z0-9_]*=")/)
          .sort()
          .join(',')
      : '';
    out.set(`${match[1]}{${labels}}`, Number(match[3]));
  }
  return out;
}

/** One sample; labels given as an object so the test does not depend on the printed order. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const key = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  return samples(text).get(`${name}{${key}}`);
}

test('requests, histogram and in-flight change as calls are made', async () => {
  const { metrics } = make();
  metrics.requestStarted();
  metrics.requestStarted();
  let text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_requests_in_flight'), 2);
  assert.equal(
    value(text, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'tools/call', outcome: 'ok' }),
    undefined,
  );

  metrics.requestFinished('mcp', 'tools/call', 'ok', 0.003);
  text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_requests_in_flight'), 1);
  assert.equal(value(text, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'tools/call', outcome: 'ok' }), 1);
  const h = { endpoint: 'mcp', method: 'tools/call' };
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_count', h), 1);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_sum', h), 0.003);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_bucket', { ...h, le: '0.0025' }), 0);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_bucket', { ...h, le: '0.005' }), 1);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_bucket', { ...h, le: '+Inf' }), 1);

  metrics.requestFinished('everything', undefined, 'rejected', 0.0001);
  metrics.requestStarted();
  metrics.requestFinished('mcp', 'tools/call', 'ok', 12);
  text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_requests_in_flight'), 0);
  assert.equal(value(text, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'tools/call', outcome: 'ok' }), 2);
  assert.equal(
    value(text, 'mcp_gateway_requests_total', { endpoint: 'everything', method: 'none', outcome: 'rejected' }),
    1,
  );
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_bucket', { ...h, le: '10' }), 1);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_bucket', { ...h, le: '30' }), 2);
  assert.equal(
    value(text, 'mcp_gateway_request_duration_seconds_bucket', {
      endpoint: 'everything',
      method: 'none',
      le: '0.0005',
    }),
    1,
  );
});

test('buckets span 0.5 ms to 30 s', async () => {
  const { metrics } = make();
  metrics.requestStarted();
  metrics.requestFinished('mcp', 'tools/list', 'ok', 1);
  const les = [...samples(await metrics.render()).keys()]
    .filter((k) => k.startsWith('mcp_gateway_request_duration_seconds_bucket{'))
    .map((k) => /le="([^"]+)"/.exec(k)![1]!)
    .filter((le) => le !== '+Inf')
    .map(Number)
    .sort((a, b) => a - b);
  assert.equal(les[0], 0.0005);
  assert.equal(les.at(-1), 30);
  assert.ok(les.length >= 10, `only ${les.length} buckets`);
});

test('denials and rate limits are counted by their own labels', async () => {
  const { metrics } = make();
  metrics.denied('mcp', 'tools/call');
  metrics.denied('mcp', 'tools/call');
  metrics.denied('memory', 'prompts/get');
  metrics.rateLimited('memory');
  const text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_policy_denials_total', { endpoint: 'mcp', method: 'tools/call' }), 2);
  assert.equal(value(text, 'mcp_gateway_policy_denials_total', { endpoint: 'memory', method: 'prompts/get' }), 1);
  assert.equal(value(text, 'mcp_gateway_rate_limited_total', { endpoint: 'memory' }), 1);
  assert.equal(value(text, 'mcp_gateway_rate_limited_total', { endpoint: 'mcp' }), undefined);
});

test('methods outside the MCP 2026 request set collapse to "other"', async () => {
  assert.equal(methodLabel('tools/call'), 'tools/call');
  assert.equal(methodLabel('subscriptions/listen'), 'subscriptions/listen');
  assert.equal(methodLabel(undefined), 'none');
  assert.equal(methodLabel('initialize'), 'other');
  assert.equal(methodLabel('x/'.repeat(50)), 'other');
  assert.equal(methodLabel('__proto__'), 'other');

  const { metrics } = make();
  for (let i = 0; i < 100; i++) {
    metrics.requestStarted();
    metrics.requestFinished('mcp', `made/up/${i}`, 'error', 0.001);
  }
  metrics.denied('mcp', 'evil/method');
  const text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'other', outcome: 'error' }), 100);
  assert.equal(value(text, 'mcp_gateway_request_duration_seconds_count', { endpoint: 'mcp', method: 'other' }), 100);
  assert.equal(value(text, 'mcp_gateway_policy_denials_total', { endpoint: 'mcp', method: 'other' }), 1);
  assert.doesNotMatch(text, /made\/up|evil/);
});

test('upstream state, restarts and era are read at scrape time', async () => {
  const { metrics, backing } = make();
  backing.upstreams = [
    { name: 'everything', state: 'starting', era: undefined, restarts: 0 },
    { name: 'memory', state: 'ready', era: 'legacy', restarts: 2 },
  ];
  let text = await metrics.render();
  const states = ['starting', 'ready', 'backing-off', 'unhealthy', 'stopped'];
  for (const state of states) {
    assert.equal(
      value(text, 'mcp_gateway_upstream_state', { server: 'everything', state }),
      state === 'starting' ? 1 : 0,
      state,
    );
    assert.equal(
      value(text, 'mcp_gateway_upstream_state', { server: 'memory', state }),
      state === 'ready' ? 1 : 0,
      state,
    );
  }
  assert.equal(value(text, 'mcp_gateway_upstream_restarts_total', { server: 'everything' }), 0);
  assert.equal(value(text, 'mcp_gateway_upstream_restarts_total', { server: 'memory' }), 2);
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'everything', era: 'unknown' }), 1);
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'memory', era: 'legacy' }), 1);
  assert.match(text, /^# TYPE mcp_gateway_upstream_restarts_total counter$/m);

  // The backing values change; the next scrape sees them, and a removed upstream disappears.
  backing.upstreams = [{ name: 'everything', state: 'backing-off', era: 'modern', restarts: 3 }];
  text = await metrics.render();
  for (const state of states) {
    assert.equal(
      value(text, 'mcp_gateway_upstream_state', { server: 'everything', state }),
      state === 'backing-off' ? 1 : 0,
      state,
    );
    assert.equal(value(text, 'mcp_gateway_upstream_state', { server: 'memory', state }), undefined, state);
  }
  assert.equal(value(text, 'mcp_gateway_upstream_restarts_total', { server: 'everything' }), 3);
  assert.equal(value(text, 'mcp_gateway_upstream_restarts_total', { server: 'memory' }), undefined);
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'everything', era: 'modern' }), 1);
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'everything', era: 'unknown' }), undefined);
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'memory', era: 'legacy' }), undefined);
});

test('cache counters are read at scrape time', async () => {
  const { metrics, backing } = make();
  backing.cache = { hits: 5, misses: 2, invalidations: 1, fetches: 2, storeErrors: 0 };
  let text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_cache_hits_total'), 5);
  assert.equal(value(text, 'mcp_gateway_cache_misses_total'), 2);
  assert.equal(value(text, 'mcp_gateway_cache_invalidations_total'), 1);
  assert.equal(value(text, 'mcp_gateway_cache_fetches_total'), 2);
  assert.equal(value(text, 'mcp_gateway_cache_store_errors_total'), 0);

  backing.cache = { hits: 9, misses: 4, invalidations: 3, fetches: 3, storeErrors: 7 };
  text = await metrics.render();
  assert.equal(value(text, 'mcp_gateway_cache_hits_total'), 9);
  assert.equal(value(text, 'mcp_gateway_cache_misses_total'), 4);
  assert.equal(value(text, 'mcp_gateway_cache_invalidations_total'), 3);
  assert.equal(value(text, 'mcp_gateway_cache_fetches_total'), 3);
  assert.equal(value(text, 'mcp_gateway_cache_store_errors_total'), 7);
});

test('two instances do not share a registry, nor use the global one', async () => {
  const a = make();
  const b = make();
  assert.notEqual(a.metrics.registry, b.metrics.registry);
  a.metrics.requestStarted();
  a.metrics.requestFinished('mcp', 'tools/list', 'ok', 0.01);
  a.metrics.rateLimited('mcp');
  b.backing.cache = { hits: 42, misses: 0, invalidations: 0, fetches: 0, storeErrors: 0 };

  const textA = await a.metrics.render();
  const textB = await b.metrics.render();
  assert.equal(value(textA, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'tools/list', outcome: 'ok' }), 1);
  assert.equal(
    value(textB, 'mcp_gateway_requests_total', { endpoint: 'mcp', method: 'tools/list', outcome: 'ok' }),
    undefined,
  );
  assert.equal(value(textB, 'mcp_gateway_rate_limited_total', { endpoint: 'mcp' }), undefined);
  assert.equal(value(textA, 'mcp_gateway_cache_hits_total'), 0);
  assert.equal(value(textB, 'mcp_gateway_cache_hits_total'), 42);
  assert.doesNotMatch(await globalRegistry.metrics(), /mcp_gateway_/);
});

test('the output parses as Prometheus text, with HELP and TYPE for every metric', async () => {
  const { metrics, backing } = make(true);
  assert.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
  backing.upstreams = [{ name: 'odd "name"\\x', state: 'ready', era: 'modern', restarts: 1 }];
  metrics.requestStarted();
  metrics.requestFinished('mcp', 'tools/call', 'cancelled', 0.2);
  metrics.denied('mcp', 'tools/call');
  metrics.rateLimited('mcp');
  const text = await metrics.render();

  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const labelValue = '"(?:[^"\\\\\\n]|\\\\.)*"';
  const label = `[a-zA-Z_][a-zA-Z0-9_]*=${labelValue}`;
  // Prometheus parses values with Go's ParseFloat, which takes NaN in any case (prom-client prints "Nan").
  const number = '(?:[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[-+]?Inf|[Nn][Aa][Nn])';
  const sample = new RegExp(`^(${name})(?:\\{(?:${label}(?:,${label})*)?\\})? ${number}(?: -?\\d+)?$`);
  const help = new RegExp(`^# HELP (${name}) .*$`);
  const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`);

  const helped = new Set<string>();
  const typed = new Map<string, string>();
  const sampled = new Set<string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const h = help.exec(line);
    const t = type.exec(line);
    const s = sample.exec(line);
    assert.ok(h || t || s, `not Prometheus text: ${JSON.stringify(line)}`);
    if (h) helped.add(h[1]!);
    if (t) typed.set(t[1]!, t[2]!);
    if (s) sampled.add(s[1]!);
  }
  for (const sampleName of sampled) {
    const family = typed.has(sampleName) ? sampleName : sampleName.replace(/_(bucket|sum|count)$/, '');
    assert.ok(typed.has(family), `no # TYPE for ${sampleName}`);
    assert.ok(helped.has(family), `no # HELP for ${sampleName}`);
  }

  const expected: Record<string, string> = {
    mcp_gateway_requests_total: 'counter',
    mcp_gateway_request_duration_seconds: 'histogram',
    mcp_gateway_requests_in_flight: 'gauge',
    mcp_gateway_upstream_state: 'gauge',
    mcp_gateway_upstream_restarts_total: 'counter',
    mcp_gateway_upstream_info: 'gauge',
    mcp_gateway_cache_hits_total: 'counter',
    mcp_gateway_cache_misses_total: 'counter',
    mcp_gateway_cache_invalidations_total: 'counter',
    mcp_gateway_cache_fetches_total: 'counter',
    mcp_gateway_cache_store_errors_total: 'counter',
    mcp_gateway_policy_denials_total: 'counter',
    mcp_gateway_rate_limited_total: 'counter',
  };
  for (const [metric, kind] of Object.entries(expected)) assert.equal(typed.get(metric), kind, metric);
  assert.ok(typed.has('process_cpu_user_seconds_total'), 'process metrics are collected');
  assert.equal(value(text, 'mcp_gateway_upstream_info', { server: 'odd \\"name\\"\\\\x', era: 'modern' }), 1);
});
