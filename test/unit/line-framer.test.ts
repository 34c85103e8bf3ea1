import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineFramer } from '../../bridge/stdio/line-framer.js';

function framer(maxLineBytes: number) {
  const lines: string[] = [];
  const oversized: { bytes: number; head: string }[] = [];
  const f = new LineFramer(maxLineBytes, {
    line: (text) => lines.push(text),
    oversized: (bytes, head) => oversized.push({ bytes, head }),
  });
  return { f, lines, oversized };
}

const b = (s: string) => Buffer.from(s, 'utf8');

test('a line split across several chunks is delivered once, whole', () => {
  const { f, lines } = framer(1024);
  f.push(b('{"jsonrpc":'));
  f.push(b('"2.0","id"'));
  assert.deepEqual(lines, []);
  f.push(b(':1}\n'));
  assert.deepEqual(lines, ['{"jsonrpc":"2.0","id":1}']);
});

test('several lines in one chunk are delivered in order; a trailing partial waits', () => {
  const { f, lines } = framer(1024);
  f.push(b('one\ntwo\nthree\nfou'));
  assert.deepEqual(lines, ['one', 'two', 'three']);
  f.push(b('r\n'));
  assert.deepEqual(lines, ['one', 'two', 'three', 'four']);
});

test('CRLF line endings are stripped, including a CR and LF in different chunks', () => {
  const { f, lines } = framer(1024);
  f.push(b('alpha\r\nbeta\r'));
  f.push(b('\ngamma\r\n'));
  assert.deepEqual(lines, ['alpha', 'beta', 'gamma']);
});

test('empty and whitespace-only lines are skipped', () => {
  const { f, lines, oversized } = framer(1024);
  f.push(b('\n\na\n\r\n   \n\t\nb\n'));
  assert.deepEqual(lines, ['a', 'b']);
  assert.deepEqual(oversized, []);
});

test('a line exactly at the cap is delivered', () => {
  const { f, lines, oversized } = framer(1024);
  const line = 'x'.repeat(1024);
  f.push(b(line + '\n'));
  assert.deepEqual(lines, [line]);
  assert.deepEqual(oversized, []);
});

test('a line exactly at the cap, built from several chunks, is delivered', () => {
  const { f, lines, oversized } = framer(1024);
  f.push(b('y'.repeat(1000)));
  f.push(b('y'.repeat(24)));
  f.push(b('\n'));
  assert.deepEqual(lines, ['y'.repeat(1024)]);
  assert.deepEqual(oversized, []);
});

test('one byte over the cap: oversized event with the byte count and the head, no line', () => {
  const { f, lines, oversized } = framer(1024);
  const line = '{"id":7,' + 'z'.repeat(1024 - 8 + 1 - 1) + '}';
  assert.equal(Buffer.byteLength(line), 1025);
  f.push(b(line + '\n'));
  assert.deepEqual(lines, []);
  assert.equal(oversized.length, 1);
  assert.equal(oversized[0]!.bytes, 1025);
  assert.ok(oversized[0]!.head.startsWith('{"id":7,'), oversized[0]!.head);
  assert.ok(oversized[0]!.head.length <= 256);
});

test('one byte over the cap across chunks: the count covers every chunk', () => {
  const { f, lines, oversized } = framer(1024);
  f.push(b('a'.repeat(600)));
  f.push(b('a'.repeat(425)));
  f.push(b('\n'));
  assert.deepEqual(lines, []);
  assert.deepEqual(
    oversized.map((o) => o.bytes),
    [1025],
  );
  assert.equal(oversized[0]!.head, 'a'.repeat(256));
});

test('a multi-MiB line over the cap is dropped and the next normal line still arrives', () => {
  const { f, lines, oversized } = framer(64 * 1024);
  const chunk = Buffer.alloc(1024 * 1024, 0x41); // 1 MiB of 'A'
  f.push(b('{"jsonrpc":"2.0","id":42,"result":"'));
  for (let i = 0; i < 3; i++) f.push(chunk);
  f.push(b('"}\n{"jsonrpc":"2.0","id":43,"result":{}}\n'));
  assert.equal(oversized.length, 1);
  const expectedBytes = Buffer.byteLength('{"jsonrpc":"2.0","id":42,"result":"') + 3 * 1024 * 1024 + 2;
  assert.equal(oversized[0]!.bytes, expectedBytes);
  assert.ok(oversized[0]!.head.startsWith('{"jsonrpc":"2.0","id":42'));
  assert.deepEqual(lines, ['{"jsonrpc":"2.0","id":43,"result":{}}']);
});

test('end() flushes a last line that had no newline', () => {
  const { f, lines } = framer(1024);
  f.push(b('first\nlast'));
  assert.deepEqual(lines, ['first']);
  f.end();
  assert.deepEqual(lines, ['first', 'last']);
});

test('end() with nothing buffered emits nothing', () => {
  const { f, lines, oversized } = framer(1024);
  f.push(b('done\n'));
  f.end();
  assert.deepEqual(lines, ['done']);
  assert.deepEqual(oversized, []);
});

test('end() reports an oversized last line that had no newline', () => {
  const { f, lines, oversized } = framer(1024);
  f.push(b('q'.repeat(2000)));
  f.end();
  assert.deepEqual(lines, []);
  assert.deepEqual(
    oversized.map((o) => o.bytes),
    [2000],
  );
});

test('multi-byte UTF-8 characters split across chunk boundaries decode intact', () => {
  const { f, lines } = framer(1024);
  const text = '{"name":"世界 🌍 é"}';
  const bytes = b(text + '\n');
  // Split every multi-byte character: one byte per chunk.
  for (let i = 0; i < bytes.length; i++) f.push(bytes.subarray(i, i + 1));
  assert.deepEqual(lines, [text]);
});

test('a chunk boundary inside a 4-byte emoji between two pushes', () => {
  const { f, lines } = framer(1024);
  const emoji = b('🌍'); // F0 9F 8C 8D
  f.push(Buffer.concat([b('a'), emoji.subarray(0, 2)]));
  f.push(Buffer.concat([emoji.subarray(2), b('b\n')]));
  assert.deepEqual(lines, ['a🌍b']);
  assert.ok(!lines[0]!.includes('\ufffd'));
});

test('the cap is counted in bytes, not characters', () => {
  const { f, lines, oversized } = framer(1024);
  // 342 three-byte characters = 1026 bytes but only 342 characters.
  f.push(b('世'.repeat(342) + '\n'));
  assert.deepEqual(lines, []);
  assert.deepEqual(
    oversized.map((o) => o.bytes),
    [1026],
  );
});
