// Property-based fuzzing (fast-check) with values JavaScript cannot turn into text, anywhere in an otherwise
// conforming request: objects whose own toString and valueOf are not functions, and values nested 1,000 to
// 100,000 deep. Refused or served, never a 5xx, never a crash; the gateway keeps serving.
// The gateway runs as a child process with one modern upstream (fuzz-edge-kit.ts); to replay a failure,
// FC_SEED=<seed> FC_PATH=<path> (both in the report; see test/fuzz-seed.ts) replays that input in every
// property; FUZZ_DUMP=<file> writes a failing body in full; FUZZ_SCALE=<n> multiplies every property's runs.
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { assertProperty } from '../fuzz-seed.js';
import { VERSION } from './harness.js';
import {
  assertIdle,
  assertServing,
  Body,
  exchange,
  gatewayForThisFile,
  REPLAY,
  SCALE,
  startChildGateway,
} from './fuzz-edge-kit.js';
import { build, envelopeArb, type Envelope } from './fuzz-edge-arbitraries.js';

const target = gatewayForThisFile();

const PLACES = [
  'arguments',
  'clientCapabilities',
  'meta',
  'params',
  'name',
  'cursor',
  'uri',
  'version',
  'progressToken',
  'id',
  'requestState',
  'body',
  'batch',
] as const;
const CONFORMING = envelopeArb.map(
  (e): Envelope => ({
    ...e,
    method: 'POST',
    contentType: { kind: 'right' },
    accept: { kind: 'right' },
    version: { kind: 'right' },
    mcpMethod: { kind: 'right' },
    mcpName: { kind: 'right' },
    origin: undefined,
  }),
);

/** A request (with conforming headers) carrying one hostile JSON value at one place. */
function bodyWith(values: fc.Arbitrary<string>): fc.Arbitrary<Body> {
  return fc
    .record({
      value: values,
      where: fc.constantFrom(...PLACES),
      method: fc.constantFrom(
        'tools/call',
        'tools/list',
        'server/discover',
        'resources/read',
        'prompts/get',
        'subscriptions/listen',
      ),
    })
    .map(({ value, where, method }) => {
      const params: string[] = [];
      params.push(
        `"name":${where === 'name' ? value : '"r__echo"'}`,
        `"uri":${where === 'uri' ? value : '"recorded://r/doc"'}`,
      );
      params.push(`"arguments":${where === 'arguments' ? `{"d":${value}}` : '{"text":"t"}'}`);
      if (where === 'cursor') params.push(`"cursor":${value}`);
      if (where === 'params') params.push(`"x":${value}`);
      if (where === 'requestState') params.push(`"requestState":${value}`);
      const version = where === 'version' ? value : `"${VERSION}"`;
      const caps = where === 'clientCapabilities' ? `{"x":${value}}` : '{}';
      const extra =
        where === 'meta'
          ? `,"com.example/hostile":${value}`
          : where === 'progressToken'
            ? `,"progressToken":${value}`
            : '';
      params.push(
        `"_meta":{"io.modelcontextprotocol/protocolVersion":${version},` +
          `"io.modelcontextprotocol/clientCapabilities":${caps}${extra}}`,
      );
      const message =
        `{"jsonrpc":"2.0","id":${where === 'id' ? value : 1},` + `"method":"${method}","params":{${params.join(',')}}}`;
      if (where === 'body') return new Body(Buffer.from(value));
      if (where === 'batch') return new Body(Buffer.from(`[${message},${value}]`));
      return new Body(Buffer.from(message));
    });
}

describe('values JavaScript cannot turn into text', () => {
  test(
    'objects whose own toString and valueOf are not functions, anywhere in a request: refused or served, never ' +
      'a 5xx',
    async () => {
      const unstringable = fc.constantFrom(
        '{"toString":1,"valueOf":"x"}',
        '{"toString":{},"valueOf":[]}',
        '[{"toString":null,"valueOf":null}]',
        '{"valueOf":1,"toString":"x"}',
      );
      await assertProperty(
        fc.asyncProperty(CONFORMING, bodyWith(unstringable), async (envelope, body) =>
          exchange(target.current(), build(envelope, body.bytes)),
        ),
        { numRuns: 150 * SCALE, ...REPLAY },
      );
      await assertIdle(target.current());
      await assertServing(target.current());
    },
  );

  // Its own gateway: while the defect below stands, a deep value can kill the process, and that must not
  // take the properties above with it.
  test(
    'values nested 1,000 to 100,000 deep anywhere in a request: ' + 'refused or served, never a 5xx, never a crash',
    async () => {
      const deep = await startChildGateway(target.dir, 'deep');
      try {
        const nested = fc
          .record({
            depth: fc.constantFrom(1_000, 10_000, 100_000),
            kind: fc.constantFrom('array' as const, 'object' as const),
          })
          .map(({ depth, kind }) =>
            kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
          );
        await assertProperty(
          fc.asyncProperty(CONFORMING, bodyWith(nested), async (envelope, body) =>
            exchange(deep, build(envelope, body.bytes)),
          ),
          { numRuns: 60 * SCALE, ...REPLAY },
        );
        await assertIdle(deep);
        await assertServing(deep);
      } finally {
        await deep.stop();
      }
    },
  );
});
