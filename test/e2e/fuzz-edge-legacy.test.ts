// Property-based fuzzing (fast-check) of 2025-era exchanges on the same endpoints: arbitrary initialize
// bodies, and arbitrary requests on no, forged and real Mcp-Session-Ids, by POST, GET and DELETE. Every
// answer is a JSON-RPC answer or refusal, never a 5xx; the gateway keeps serving and nothing stays in flight.
// The gateway runs as a child process with one modern upstream (fuzz-edge-kit.ts); to replay a failure,
// FC_SEED=<seed> FC_PATH=<path> (both in the report; see test/fuzz-seed.ts) replays that input in every
// property; FUZZ_DUMP=<file> writes a failing body in full; FUZZ_SCALE=<n> multiplies every property's runs.
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { assertProperty } from '../fuzz-seed.js';
import { assertIdle, assertServing, exchange, gatewayForThisFile, REPLAY, SCALE, send, utf8 } from './fuzz-edge-kit.js';
import { build, envelopeArb, headerText, legacyMetaArb, rpcTextFor } from './fuzz-edge-arbitraries.js';

const target = gatewayForThisFile();

const LEGACY_METHODS = [
  'initialize',
  'initialize',
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'tools/call',
  'resources/read',
  'resources/subscribe',
  'logging/setLevel',
  'completion/complete',
  'server/discover',
  'subscriptions/listen',
  'tasks/get',
];

describe('2025-era exchanges on the same endpoints (initialize, Mcp-Session-Id, GET and DELETE)', () => {
  test(
    'arbitrary initialize bodies, and arbitrary requests on no, forged and real sessions: JSON-RPC answers or ' +
      'refusals, never a 5xx',
    async () => {
      const session = fc.oneof(
        fc.constant<'none' | 'real'>('none'),
        fc.constant<'none' | 'real'>('real'),
        headerText,
        fc.constantFrom('AQ', 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ''),
      );
      const verb = fc.oneof(
        { weight: 6, arbitrary: fc.constant('POST') },
        { weight: 1, arbitrary: fc.constant('GET') },
        { weight: 1, arbitrary: fc.constant('DELETE') },
      );
      await assertProperty(
        fc.asyncProperty(
          envelopeArb,
          utf8(rpcTextFor(LEGACY_METHODS, legacyMetaArb)),
          session,
          verb,
          async (envelope, body, which, method) => {
            const sent = build({ ...envelope, method, version: { kind: 'absent' } }, body.bytes);
            if (which === 'real') {
              const init = {
                jsonrpc: '2.0',
                id: 'init',
                method: 'initialize',
                params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
              };
              const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
              const got = await send(
                target.current().base,
                { method: 'POST', path: sent.path, headers, body: Buffer.from(JSON.stringify(init)), chunked: false },
                false,
              );
              const id = got.headers['mcp-session-id'];
              if (typeof id === 'string') sent.headers['mcp-session-id'] = id;
            } else if (which !== 'none') sent.headers['mcp-session-id'] = which;
            await exchange(target.current(), sent);
          },
        ),
        { numRuns: 300 * SCALE, ...REPLAY },
      );
      await assertIdle(target.current());
      await assertServing(target.current());
    },
  );
});
