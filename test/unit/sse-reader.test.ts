import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseReader } from '../../bridge/sse-reader.js';

function reader(max = 1024 * 1024) {
  const events: [string, string][] = [];
  const r = new SseReader((data, type) => events.push([type, data]), max);
  return { r, events };
}
const b = (s: string) => Buffer.from(s, 'utf8');

test('events are delivered whole, in order, however the bytes are split', () => {
  const stream = 'event: message\ndata: {"a":1}\n\n: keep-alive\n\ndata: {"b":2}\n\n';
  for (let size = 1; size <= stream.length; size++) {
    const { r, events } = reader();
    for (let i = 0; i < stream.length; i += size) r.push(b(stream.slice(i, i + size)));
    assert.deepEqual(
      events,
      [
        ['message', '{"a":1}'],
        ['message', '{"b":2}'],
      ],
      `chunk size ${size}`,
    );
  }
});

test('CRLF and CR line ends, including a CR and its LF in different chunks', () => {
  const { r, events } = reader();
  r.push(b('data: one\r'));
  r.push(b('\n\r\ndata: two\r\rdata: three\r\n\r\n'));
  assert.deepEqual(events, [
    ['message', 'one'],
    ['message', 'two'],
    ['message', 'three'],
  ]);
});

test('a UTF-8 character split across chunks survives; a leading BOM is dropped', () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b('data: "grüße 世界"\n\n')]);
  const { r, events } = reader();
  for (const byte of bytes) r.push(Buffer.from([byte]));
  assert.deepEqual(events, [['message', '"grüße 世界"']]);
});

test('several data lines join with newlines; one optional space after the colon is removed', () => {
  const { r, events } = reader();
  r.push(b('data:first\ndata:  second\ndata\n\n'));
  assert.deepEqual(events, [['message', 'first\n second\n']]);
});

test('id, retry, comments and unknown fields are ignored; a blank line without data dispatches nothing', () => {
  const { r, events } = reader();
  r.push(b('id: 7\nretry: 1000\n: comment\nfoo: bar\n\nevent: custom\n\nid: 8\ndata: x\n\n'));
  assert.deepEqual(events, [['message', 'x']]);
});

test('the event type is kept for the event it belongs to', () => {
  const { r, events } = reader();
  r.push(b('event: endpoint\ndata: /messages\n\ndata: y\n\n'));
  assert.deepEqual(events, [
    ['endpoint', '/messages'],
    ['message', 'y'],
  ]);
});

test('a final event without its blank line is still delivered at the end of the stream', () => {
  const { r, events } = reader();
  r.push(b('data: {"id":1,"result":{}}'));
  assert.deepEqual(events, []);
  r.end();
  assert.deepEqual(events, [['message', '{"id":1,"result":{}}']]);
});

test('an event over the cap makes push return false', () => {
  const { r } = reader(100);
  assert.equal(r.push(b(`data: ${'x'.repeat(50)}\n`)), true);
  assert.equal(r.push(b(`data: ${'x'.repeat(60)}`)), false);
});
