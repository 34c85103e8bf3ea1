// Shared by the OpenAPI tests: an OpenApiUpstream loaded from a document (a fixture or one written to a
// temporary folder), and one JSON-RPC request to it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { type OpenApiConfig, OpenApiUpstream } from '../../bridge/openapi/openapi-upstream.js';
import type { JsonRpcResponse } from '../../protocol/jsonrpc.js';
import type { RequestOptions } from '../../bridge/upstream.js';
import { silentLog } from '../../infra/log.js';
import { ROOT } from './harness.js';

export const FIXTURES = path.join(ROOT, 'test/fixtures/openapi');

export function loadUpstream(document: string, overrides: Partial<OpenApiConfig> = {}): Promise<OpenApiUpstream> {
  return OpenApiUpstream.load(
    {
      name: 'pets',
      where: 'servers.pets',
      document: path.isAbsolute(document) || /^https?:/.test(document) ? document : path.join(FIXTURES, document),
      headers: {},
      timeoutMs: 10_000,
      listTtlMs: 60_000,
      maxResponseBytes: 64 * 1024,
      nameBudget: 58,
      include: () => true,
      ...overrides,
    },
    silentLog,
  );
}

/** Writes `document` (an object) as YAML into `dir`, returning its path. */
export function writeDocument(dir: string, file: string, document: unknown): string {
  const at = path.join(dir, file);
  writeFileSync(at, typeof document === 'string' ? document : stringify(document));
  return at;
}

let nextId = 1;
export async function ask(
  upstream: OpenApiUpstream,
  method: string,
  params: Record<string, unknown> = {},
  options?: RequestOptions,
): Promise<JsonRpcResponse> {
  return upstream.request({ jsonrpc: '2.0', id: nextId++, method, params }, options);
}

/** A tools/call's result (failing the test when it was a JSON-RPC error). */
export async function call(
  upstream: OpenApiUpstream,
  name: string,
  args: Record<string, unknown>,
  options?: RequestOptions,
): Promise<any> {
  const response = await ask(upstream, 'tools/call', { name, arguments: args }, options);
  if (!('result' in response)) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
  return response.result;
}

export async function toolsOf(upstream: OpenApiUpstream): Promise<Record<string, any>> {
  const response = await ask(upstream, 'tools/list');
  if (!('result' in response)) throw new Error(JSON.stringify(response));
  return Object.fromEntries((response.result.tools as any[]).map((tool) => [tool.name, tool]));
}

/** A minimal valid OpenAPI 3.0 document with these paths. */
export function documentWith(
  paths: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { openapi: '3.0.3', info: { title: 'T', version: '1' }, paths, ...extra };
}
