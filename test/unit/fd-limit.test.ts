// The descriptor limit read at start (issue #35, item 2): parsed from /proc/self/limits, turned into the
// default listen.maxConnections below it, and warned about when low.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  defaultMaxConnections,
  LOW_FD_LIMIT,
  PROBE_HEADROOM,
  readFdLimit,
  reportFdLimit,
} from '../../src/gateway/connection-cap.js';
import { tempDir } from '../temp.js';
import { recordingLog } from '../recording-log.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63432                63432                processes
Max open files            1024                 524288               files
Max locked memory         8388608              8388608              bytes
`;

test('the soft limit on open files is read from a limits file; unreadable or unlisted gives undefined', () => {
  const dir = tempDir('mcp-gateway-fd-');
  const file = path.join(dir, 'limits');
  writeFileSync(file, LIMITS);
  assert.equal(readFdLimit(file), 1024);
  writeFileSync(file, LIMITS.replace('1024                 524288', 'unlimited            unlimited'));
  assert.equal(readFdLimit(file), Number.MAX_SAFE_INTEGER);
  assert.equal(readFdLimit(path.join(dir, 'missing')), undefined);
  if (process.platform === 'linux') assert.ok((readFdLimit() ?? 0) > 0, 'this process has a limit');
});

test('the default connection cap stays below the limit, leaving room for the probes and everything else', () => {
  for (const limit of [256, 1024, 4096, 20_000, 65_536, 1_048_576]) {
    const cap = defaultMaxConnections(limit);
    assert.ok(cap + PROBE_HEADROOM <= limit - 128, `limit ${limit}: cap ${cap}`);
    assert.ok(cap >= 16);
  }
  assert.equal(defaultMaxConnections(1024), 1024 - 256 - PROBE_HEADROOM);
  assert.equal(defaultMaxConnections(undefined), 10_000);
});

test('a low limit is warned about at start, naming ulimit; a high one is not', () => {
  const { log, warnings } = recordingLog();
  reportFdLimit(1024, defaultMaxConnections(1024), false, log);
  assert.equal(warnings().length, 1);
  assert.match(warnings()[0]!, /ulimit -n/);
  reportFdLimit(LOW_FD_LIMIT * 4, defaultMaxConnections(LOW_FD_LIMIT * 4), false, log);
  assert.equal(warnings().length, 1);
  reportFdLimit(LOW_FD_LIMIT * 4, LOW_FD_LIMIT * 4, true, log);
  assert.match(warnings()[1]!, /listen\.maxConnections/);
});
