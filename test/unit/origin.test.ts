import { test } from 'node:test';
import assert from 'node:assert/strict';
import { originChecker } from '../../src/edge/origin.js';

test('no Origin header (not a browser) is allowed', () => {
  assert.equal(originChecker([])(undefined), true);
});

test('loopback origins are allowed with no configuration', () => {
  const ok = originChecker([]);
  assert.equal(ok('http://localhost:3000'), true);
  assert.equal(ok('http://127.0.0.1:5173'), true);
  assert.equal(ok('http://[::1]:8080'), true);
  assert.equal(ok('http://localhost'), true);
});

test('a foreign origin is refused', () => {
  assert.equal(originChecker([])('https://evil.example'), false);
});

test("the opaque origin 'null' is refused", () => {
  assert.equal(originChecker([])('null'), false);
  assert.equal(originChecker(['https://app.example'])('null'), false);
});

test('a listed origin is allowed, listed with or without a trailing slash, compared case-insensitively', () => {
  assert.equal(originChecker(['https://app.example'])('https://app.example'), true);
  assert.equal(originChecker(['https://app.example/'])('https://app.example'), true);
  assert.equal(originChecker(['https://App.Example'])('https://app.example'), true);
  assert.equal(originChecker(['https://app.example'])('HTTPS://APP.EXAMPLE'), true);
});

test('listing one origin does not allow another', () => {
  const ok = originChecker(['https://app.example']);
  assert.equal(ok('https://other.example'), false);
  assert.equal(ok('https://app.example:8443'), false);
  assert.equal(ok('http://app.example'), false);
});

test("'*' allows every origin", () => {
  const ok = originChecker(['*']);
  assert.equal(ok('https://evil.example'), true);
  assert.equal(ok('null'), true);
});

test('comma-joined duplicate origins are refused, even loopback ones', () => {
  const ok = originChecker([]);
  assert.equal(ok('http://localhost:3000, http://localhost:3000'), false);
  assert.equal(ok('http://localhost:3000,https://evil.example'), false);
});

test('a domain that merely starts with localhost is refused', () => {
  assert.equal(originChecker([])('http://localhost.evil.com'), false);
});

test('non-http schemes on loopback are refused; garbage is refused', () => {
  const ok = originChecker([]);
  assert.equal(ok('file://localhost'), false);
  assert.equal(ok('not a url'), false);
});

test('other 127/8 addresses are loopback and allowed', () => {
  assert.equal(originChecker([])('http://127.1.2.3:9000'), true);
});

test('a DNS name whose first label is 127 is not loopback and is refused', () => {
  const ok = originChecker([]);
  assert.equal(ok('http://127.evil.com'), false);
  assert.equal(ok('http://127.0.0.1.evil.com'), false);
});
