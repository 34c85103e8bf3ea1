// The secrets detector on a password in a URL's userinfo (policy/guardrails/secrets.ts, URL_PASSWORD): found in
// a .env file, a config dump and a log line, and redacted alone, so the URL stays readable; never in URLs that
// carry a port, a user without a password, an '@' in their path, an IPv6 literal, nor in a mailto: link or a
// masked or templated password; and a megabyte of near-misses finishes (linear, checked by finishing, not timed).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUILT_IN_DETECTORS } from '../../policy/guardrails/detectors.js';
import { judgeContent, redactText } from '../../policy/guardrails/scan.js';

const { secrets } = BUILT_IN_DETECTORS;
const MARK = '[redacted:secrets]';
const found = (text: string): string[] => secrets.find(text).map(([start, end]) => text.slice(start, end));
const redacted = (text: string): string => redactText(text, [secrets]);

describe("a URL's password", () => {
  test('the three shapes: user and password, a web URL, a password without a user', () => {
    assert.equal(redacted('postgres://app:s3cret@db.internal:5432/app'), `postgres://app:${MARK}@db.internal:5432/app`);
    assert.equal(redacted('https://user:pass@host/'), `https://user:${MARK}@host/`);
    assert.equal(redacted('redis://:pw@host'), `redis://:${MARK}@host`);
  });

  test('a .env file: each password redacted, every other line and part of each URL kept', () => {
    const env = [
      'NODE_ENV=production',
      'DATABASE_URL=postgres://app:Xk9%23pL2vQ@db.internal:5432/app?sslmode=require',
      'REDIS_URL=rediss://:Zt7qWm1nB4@cache.internal:6380/0',
      'AMQP_URL=amqp://orders:w0rk-Queue.42@mq.internal:5672/%2F',
      'MONGO_URL=mongodb+srv://reporting:Pa55w0rd!@cluster0.ab1cd.mongodb.net/reports?retryWrites=true',
      'PUBLIC_URL=https://shop.example.com:8443/',
      'REPLICA_URL=postgres://app@replica.internal:5432/app',
      '',
    ].join('\n');
    assert.deepEqual(found(env), ['Xk9%23pL2vQ', 'Zt7qWm1nB4', 'w0rk-Queue.42', 'Pa55w0rd!']);
    assert.equal(
      redacted(env),
      [
        'NODE_ENV=production',
        `DATABASE_URL=postgres://app:${MARK}@db.internal:5432/app?sslmode=require`,
        `REDIS_URL=rediss://:${MARK}@cache.internal:6380/0`,
        `AMQP_URL=amqp://orders:${MARK}@mq.internal:5672/%2F`,
        `MONGO_URL=mongodb+srv://reporting:${MARK}@cluster0.ab1cd.mongodb.net/reports?retryWrites=true`,
        'PUBLIC_URL=https://shop.example.com:8443/',
        'REPLICA_URL=postgres://app@replica.internal:5432/app',
        '',
      ].join('\n'),
    );
  });

  test('a config dump as a tool result: text and structuredContent redacted, the JSON still valid', () => {
    const config = {
      service: 'billing',
      listen: 'http://0.0.0.0:8080',
      database: { url: 'postgresql://billing:hunter2@[2001:db8::5]:5432/billing', pool: 10 },
      broker: 'nats://svc:nats-Pw_77@nats.internal:4222',
      upstream: 'https://api.partner.example/v2/',
      repo: 'ssh://git@github.com/acme/billing.git',
    };
    const result = { content: [{ type: 'text', text: JSON.stringify(config, null, 2) }], structuredContent: config };
    const verdict = judgeContent(result, [{ name: 'no-secrets', action: 'redact', detectors: [secrets] }]);
    assert.deepEqual(verdict.hits, [{ rule: 'no-secrets', action: 'redact', detectors: ['secrets'] }]);
    const out = verdict.value as typeof result;
    assert.deepEqual(out.structuredContent, {
      ...config,
      database: { url: `postgresql://billing:${MARK}@[2001:db8::5]:5432/billing`, pool: 10 },
      broker: `nats://svc:${MARK}@nats.internal:4222`,
    });
    assert.deepEqual(JSON.parse(out.content[0]!.text), out.structuredContent);
    assert.doesNotMatch(JSON.stringify(out), /hunter2|nats-Pw_77/);
  });

  test('a log line: the password only, the rest of the line as it was', () => {
    const line =
      '2026-12-07T15:02:11.482Z ERROR worker-3 connect ECONNREFUSED ' +
      'url=amqps://ingest:R4bb1t-s3cr3t@mq-1.prod.internal:5671/vhost retry=3/5 (see http://wiki.internal:8090/x)';
    assert.deepEqual(found(line), ['R4bb1t-s3cr3t']);
    assert.equal(redacted(line), line.replace('R4bb1t-s3cr3t', MARK));
    // A clone URL carrying a token as its password: the token goes, user and host stay.
    assert.equal(
      redacted('git clone https://oauth2:glpat-Ab12Cd34Ef56Gh78Ij90@gitlab.example.com/acme/app.git'),
      `git clone https://oauth2:${MARK}@gitlab.example.com/acme/app.git`,
    );
  });

  test('no password in ports, users alone, paths with an @, IPv6 literals, mailto: links, masks and templates', () => {
    const ordinary = [
      'http://host:8080/x',
      'http://localhost:3000 then mail bob@example.com',
      'ssh://git@github.com',
      'ssh://git@github.com:22/acme/app.git',
      'git+ssh://git@github.com:acme/app.git',
      'mailto:a@b.c',
      'mailto:jane.roe@example.com?subject=hi:there',
      'http://[::1]:8080/',
      'http://[2001:db8::1]:443/path@x',
      'http://[fe80::1%25eth0]:8080/',
      'http://[::ffff:192.0.2.1]/',
      'https://medium.com/@user/post',
      'https://host:8443/@scope/pkg',
      'https://www.npmjs.com/package/@scope/pkg:1.2.3@latest',
      'https://example.com/a:b@c',
      'postgres://app:***@db.internal/app',
      'postgres://app:${PGPASSWORD}@db.internal/app',
      'postgres://app:<password>@db.internal/app',
      'postgres://app:@db.internal/app',
      'urn:isbn:0451450523',
      'time 12:30:45 at user@host',
    ];
    for (const text of ordinary) assert.deepEqual(found(text), [], text);
  });

  test('a password the other secret patterns also find is one span', () => {
    const token = ['ghp', '_', '1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R'].join('');
    const text = `https://x-access-token:${token}@github.com/acme/app.git`;
    assert.deepEqual(secrets.find(text), [[text.indexOf(token), text.indexOf(token) + token.length]]);
    assert.equal(redacted(text), `https://x-access-token:${MARK}@github.com/acme/app.git`);
  });

  test('a megabyte of near-misses finishes', () => {
    const mib = 1 << 20;
    const nearMisses = [
      'a://b:'.repeat(mib / 6),
      `a://:${'p'.repeat(127)}`.repeat(mib / 132),
      `x://${'u'.repeat(64)}:${'p'.repeat(128)}/`.repeat(mib / 198),
      `a://${':'.repeat(mib)}`,
      'http://host:8080/'.repeat(mib / 17),
    ];
    for (const text of nearMisses) assert.deepEqual(secrets.find(text), []);
  });
});
