import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeHeaderValue } from '../../src/edge/header-value.js';

test('plain visible ASCII is returned as is', () => {
  assert.equal(decodeHeaderValue('get_weather'), 'get_weather');
  assert.equal(decodeHeaderValue('file:///project/src/main.rs'), 'file:///project/src/main.rs');
  assert.equal(decodeHeaderValue('us-west 2'), 'us-west 2'); // interior space is fine
});

test("spec example: 'Hello, 世界' is sent as =?base64?SGVsbG8sIOS4lueVjA==?=", () => {
  assert.equal(Buffer.from('Hello, 世界').toString('base64'), 'SGVsbG8sIOS4lueVjA==');
  assert.equal(decodeHeaderValue('=?base64?SGVsbG8sIOS4lueVjA==?='), 'Hello, 世界');
});

test("spec example: ' padded ' is sent as =?base64?IHBhZGRlZCA=?=", () => {
  assert.equal(decodeHeaderValue('=?base64?IHBhZGRlZCA=?='), ' padded ');
});

test('spec example: a literal =?base64?literal?= is itself encoded', () => {
  assert.equal(decodeHeaderValue('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='), '=?base64?literal?=');
});

test('the raw =?base64?literal?= is not valid Base64 and is refused', () => {
  assert.equal(decodeHeaderValue('=?base64?literal?='), undefined);
});

test('invalid base64 inside the wrapper → undefined', () => {
  assert.equal(decodeHeaderValue('=?base64?SGVsbG8*?='), undefined); // bad alphabet
  assert.equal(decodeHeaderValue('=?base64?SGVsbG8?='), undefined); // length not a multiple of 4
  assert.equal(decodeHeaderValue('=?base64?SGV=sbG8=?='), undefined); // padding in the middle
  assert.equal(decodeHeaderValue('=?base64?SGVsbA===?='), undefined); // three padding chars
});

test('base64 of bytes that are not UTF-8 → undefined', () => {
  // 0xFF 0xFE 0xFD is never valid UTF-8.
  assert.equal(decodeHeaderValue('=?base64?' + Buffer.from([0xff, 0xfe, 0xfd]).toString('base64') + '?='), undefined);
});

test('a legitimately encoded U+FFFD is accepted', () => {
  assert.equal(decodeHeaderValue('=?base64?' + Buffer.from('\ufffd').toString('base64') + '?='), '\ufffd');
});

test('a truncated 4-byte UTF-8 sequence (F0 9F 98) is not UTF-8 → undefined', () => {
  assert.equal(Buffer.from([0xf0, 0x9f, 0x98]).toString('base64'), '8J+Y');
  assert.equal(decodeHeaderValue('=?base64?8J+Y?='), undefined);
});

test('a raw non-ASCII value (as Latin-1 from the wire) → undefined', () => {
  assert.equal(decodeHeaderValue('café'), undefined);
  assert.equal(decodeHeaderValue('ä¸\u0096ç\u0095\u008c'), undefined); // UTF-8 bytes of 世界 read as Latin-1
});

test('control characters → undefined', () => {
  assert.equal(decodeHeaderValue('a\x01b'), undefined);
  assert.equal(decodeHeaderValue('a\x7fb'), undefined);
  assert.equal(decodeHeaderValue('a\nb'), undefined);
  assert.equal(decodeHeaderValue('a\x00'), undefined);
});

test('leading or trailing whitespace in a raw value → undefined (it must be base64-encoded)', () => {
  assert.equal(decodeHeaderValue(' padded '), undefined);
  assert.equal(decodeHeaderValue('padded '), undefined);
});

test('an empty base64 payload decodes to the empty string', () => {
  assert.equal(decodeHeaderValue('=?base64??='), '');
});
