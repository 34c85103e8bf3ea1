// Attack (#35 item 6) through the gateway: a caller allowed `echo` only when `args.limit <= 100` (or only for
// id 1200000000000000000) sends a number no double holds. On Node 22 and later the server would receive the
// digits as sent, so the call is refused; on Node 20 the gateway rounds it and the server receives the
// rounded number, which the condition judged. Either way the condition decides on what the server gets.
// What reached the server is read from a recording stdio server, after a control call on the same pipe.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { KEEPS_EXACT_NUMBERS } from '../../protocol/exact-json.js';
import { tempDir } from '../temp.js';
import { headersFor, post, request, startTestGateway, recordingServer } from './harness.js';

describe(
  'a when: condition and numbers no double holds, end to end ' + `(exact numbers kept: ${KEEPS_EXACT_NUMBERS})`,
  () => {
    let gateway: RunningGateway;
    const recordFile = path.join(tempDir('mcp-gateway-cel-numbers-'), 'received.jsonl');

    before(async () => {
      gateway = await startTestGateway(
        { rec: recordingServer(recordFile, { id: 'rec' }) },
        {},
        {
          auth: { anonymous: true },
          policies: [
            {
              name: 'bounded',
              principals: { ids: ['anonymous'] },
              allow: { servers: ['rec'], tools: ['rec__echo', 'rec__tool-0'] },
              when: [
                {
                  tool: 'rec__echo',
                  expr: "args.text == 'control' || (args.limit <= 100 && args.id == 1200000000000000000)",
                },
              ],
            },
          ],
        },
      );
    });
    after(() => gateway?.close());

    /**
     * Sends the arguments as raw JSON text (so its digits are the caller's), and the text the server received for
     * it.
     */
    let sent = 0;
    const send = async (argumentsText: string) => {
      const body = request('tools/call', { name: 'rec__echo', arguments: {} });
      // A tag of its own finds this call among the recorded lines (the gateway numbers upstream ids itself).
      const tag = `"tag":"call-${++sent}"`;
      const text = JSON.stringify(body).replace(
        '"arguments":{}',
        `"arguments":${argumentsText.replace(/^\{/, `{${tag},`)}`,
      );
      const answer = await post(`${gateway.url}/mcp`, text, headersFor(body));
      // A control call down the same pipe: once it is recorded, the call before it was recorded or never sent.
      const control = request('tools/call', { name: 'rec__echo', arguments: { text: 'control' } });
      assert.equal((await post(`${gateway.url}/mcp`, control)).body.result?.content?.[0]?.text, '{"text":"control"}');
      const lines = readFileSync(recordFile, 'utf8').trim().split('\n');
      const received = lines.find((line) => line.includes(tag));
      return {
        answer: answer.body,
        received: received && /"arguments":(\{[^}]*\})/.exec(received)?.[1]?.replace(`${tag},`, ''),
      };
    };

    test('the controls: 100 and the exact id pass; 101 is refused', async () => {
      assert.equal(
        (await send('{"limit":100,"id":1200000000000000000}')).received,
        '{"limit":100,"id":1200000000000000000}',
      );
      const refused = await send('{"limit":101,"id":1200000000000000000}');
      assert.match(refused.answer.error?.message ?? '', /refused by policy bounded/);
      assert.equal(refused.received, undefined);
    });

    test('limit 100.000000000000001 and ids within ±128 of 1.2e18 never pass on a rounded value', async () => {
      for (const args of [
        '{"limit":100.000000000000001,"id":1200000000000000000}',
        '{"limit":1,"id":1200000000000000001}',
        '{"limit":1,"id":1200000000000000128}',
        '{"limit":1,"id":1199999999999999872}',
      ]) {
        const { answer, received } = await send(args);
        if (KEEPS_EXACT_NUMBERS) {
          assert.match(answer.error?.message ?? '', /refused by policy bounded/, `${args}: ${JSON.stringify(answer)}`);
          assert.equal(received, undefined, `${args} never reached the server`);
        } else {
          // Node 20: the server gets what the condition judged (the rounded number), or nothing.
          if (received !== undefined) {
            const sent = JSON.parse(received) as { limit: number; id: number };
            assert.ok(
              sent.limit <= 100 && sent.id === 1.2e18,
              `${args} reached the server as ${received}, which meets the condition`,
            );
          }
        }
      }
    });
  },
);
