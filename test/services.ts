// The outside programs some tests need: Redis on 127.0.0.1:6379, redis-server on PATH, a Chromium for
// the status page and HAProxy for the deployment files. Locally a missing one skips the tests that need it, with one
// line saying what to install;
// with CI=true it fails them instead, naming it, so a green CI run means every test ran.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { reachable } from './e2e/own-redis.js';

export const IN_CI = /^(1|true|yes)$/i.test(process.env.CI ?? '');

export interface Need {
  present: boolean;
  /** For a test's or describe's options: the reason to skip, or false when it runs. */
  skip: false | string;
  /** Call first in a test or a `before` hook: throws naming what to install when the service is missing. */
  check(): void;
}

const announced = new Set<string>();

function need(what: string, present: boolean, install: string, group: string): Need {
  if (present) return { present, skip: false, check() {} };
  const message = `${what} is missing: ${install}`;
  if (IN_CI) {
    return {
      present,
      skip: false,
      check() {
        throw new Error(`${message} (CI=true: the tests that need it fail instead of being skipped)`);
      },
    };
  }
  const line = `skipping ${group}: ${message}`;
  if (!announced.has(line)) {
    announced.add(line);
    console.log(line);
  }
  return { present, skip: message, check() {} };
}

/**
 * Whether the port answers, asked up to three times: on a machine running many test files at once one connect
 * can stall past its timeout, and under CI=true a Redis taken for missing fails whole groups of tests.
 */
async function reachableSoon(port: number): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) if (await reachable(port)) return true;
  return false;
}

/** The Redis shared by the replica, cache and rate-limit tests. */
export async function sharedRedis(group: string): Promise<Need> {
  return need(
    'Redis at 127.0.0.1:6379',
    await reachableSoon(6379),
    'install redis-server (apt-get install -y redis-server) and start it (redis-server --daemonize yes), or run ' +
      '.ci/run',
    group,
  );
}

/**
 * Deletes every key under the prefix in the shared Redis, so a test group leaves it as it found it. ioredis is
 * loaded here, not at the top: most files importing this module never talk to Redis.
 */
export async function dropRedisKeys(keyPrefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis('redis://127.0.0.1:6379');
  const keys = await client.keys(`${keyPrefix}*`);
  if (keys.length) await client.del(...keys);
  client.disconnect();
}

/** redis-server on PATH, for tests that start, stop and freeze a Redis of their own. */
export function redisServerBinary(group: string): Need {
  const present = spawnSync('redis-server', ['--version']).status === 0;
  return need('redis-server on PATH', present, 'install it (apt-get install -y redis-server)', group);
}

/** haproxy on PATH, for the deployment files and the rolling restart behind it. */
export function haproxyBinary(group: string): Need {
  const present = spawnSync('haproxy', ['-v']).status === 0;
  return need('haproxy on PATH', present, "install Debian's haproxy (apt-get install -y haproxy)", group);
}

const CHROMIUM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome', 'chrome'];

/** A Chromium to drive: $CHROMIUM, then the usual names on PATH, then a browser playwright downloaded. */
export async function findChromium(): Promise<string | undefined> {
  const fromEnv = process.env.CHROMIUM;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of CHROMIUM_NAMES) {
      const candidate = join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  try {
    const { chromium } = await import('playwright-core');
    const downloaded = chromium.executablePath();
    return existsSync(downloaded) ? downloaded : undefined;
  } catch {
    return undefined;
  }
}

export async function chromium(group: string): Promise<Need & { path: string | undefined }> {
  const path = await findChromium();
  const found = need(
    'Chromium',
    path !== undefined,
    "install Debian's chromium (apt-get install -y chromium), or set CHROMIUM to a Chromium or Chrome binary",
    group,
  );
  return { ...found, path };
}

/**
 * This Node's side of the exact-numbers split, from its version alone. Not from the code under test
 * (protocol/exact-json.ts's KEEPS_EXACT_NUMBERS): if its detection broke, the Node 22 suites would be skipped on
 * both legs and stay green; read from the version, they run on 22 and fail there.
 */
export function nodeSide(version = process.versions.node): 20 | 22 {
  return Number(version.split('.')[0]) >= 22 ? 22 : 20;
}

/**
 * The skip option for a block that runs on one side of the exact-numbers split only: Node.js 20 (every number
 * parsed as a double) or 22 and later (numbers kept raw). On the other side the block is skipped. With CI=true
 * that skip is allowed only when this run also covers the block's side: .ci/run runs the suite on both and says
 * so in TEST_NODE_LEGS (the majors, e.g. "20 22"). Otherwise a test in the block's place fails, naming why, so
 * a green CI run means every Node-version suite ran somewhere.
 */
export function onlyOnNode(side: 20 | 22, reason: string): false | string {
  const here = nodeSide();
  if (side === here) return false;
  const legs = (process.env.TEST_NODE_LEGS ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  const covered = legs.some((major) => Math.min(major, 22) === side);
  if (IN_CI && !covered) {
    test(
      `the Node.js ${side === 20 ? '20' : '22 and later'} suite skipped here ` + `(${reason}) ran on no other leg`,
      () => {
        throw new Error(
          `CI=true and TEST_NODE_LEGS=${JSON.stringify(process.env.TEST_NODE_LEGS ?? '')} does not name a Node.js ` +
            `${side === 20 ? '20' : '22 or later'}: run .ci/run, which runs the suite on both and sets it`,
        );
      },
    );
  }
  return reason;
}
