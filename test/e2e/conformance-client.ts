// The client under test in the official conformance suite's auth scenarios (@modelcontextprotocol/conformance): the
// gateway, with the scenario's server as its `conf` upstream (`credentials: { type: oauth }`), called as one
// principal. When a call answers with a connect link, a person's part is played in Chromium: open the link, confirm,
// and follow the scenario's authorization server (which approves at once) back to the gateway's callback. Then the
// call again, so that the scenario sees what the gateway does with the token. The suite runs
// conformance-relay.mjs as its client command, which hands the scenario to this (in the test file's process: the
// gateway's modules load once, not once per scenario).
import { writeFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { parseConfig } from '../../src/config/config.js';
import { startGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { createLogger } from '../../infra/logger.js';
import { unusedPort } from '../ports.js';
import { tempDir } from '../temp.js';
import { verifyingKeySet } from './conformance-idp-key.js';
import { ROOT, request, send } from './harness.js';

/** What the suite gives its client: the scenario, its server's URL, and (for some) a pre-registered client. */
export interface ScenarioRun {
  scenario: string;
  serverUrl: string;
  context: {
    client_id?: string;
    client_secret?: string;
    private_key_pem?: string;
    signing_algorithm?: string;
    /** Cross-app access: the person's ID token at the enterprise IdP, and that IdP. */
    idp_id_token?: string;
    idp_client_id?: string;
    idp_issuer?: string;
    idp_token_endpoint?: string;
  };
}

/** The client's exit code as the suite reads it, and what it did, step by step (kept as the client's stdout). */
export interface ClientOutcome {
  exitCode: number;
  /** `at`: milliseconds since the suite handed over the scenario. */
  steps: { what: string; at: number; detail: unknown }[];
}

/**
 * auth/basic-cimd wants, as the client_id, the Client ID Metadata Document URL the suite's own example client is
 * configured with. The gateway sends its own (<publicUrl>/oauth/client-metadata.json) only when publicUrl is https,
 * which a browser on this loopback rig cannot reach (upstream-oauth-conformance.test.ts covers that choice); here it is
 * given that URL as a configured clientId instead, which it sends as it is, with no secret and no registration.
 */
const SUITE_CIMD_URL = 'https://conformance-test.local/client-metadata.json';
/** More links than any scenario asks for (one, and one more for a step-up): a gateway that keeps asking stops here. */
const MAX_LINKS = 4;
const KEY = 'conformance-principal-key-0123456789';

export async function runClient(browser: Browser, run: ScenarioRun): Promise<ClientOutcome> {
  const steps: ClientOutcome['steps'] = [];
  const started = performance.now();
  const step = (what: string, detail: unknown) =>
    steps.push({ what, at: Math.round(performance.now() - started), detail });
  const clientId = run.context.client_id ?? (run.scenario === 'auth/basic-cimd' ? SUITE_CIMD_URL : undefined);
  const port = await unusedPort();
  // Cross-app access: the caller is the person, with their ID token at the IdP as their JWT (auth.jwt).
  const idToken = run.context.idp_id_token;
  const config = parseConfig(
    {
      listen: { port, publicUrl: `http://127.0.0.1:${port}` },
      auth: { apiKeys: [{ key: KEY, principal: 'conformance' }], ...(idToken && { jwt: idpJwt(run) }) },
      credentials: { key: 'conformance-credentials-key-of-32-bytes', file: `${tempDir('conformance-')}/c.json` },
      servers: {
        conf: { url: run.serverUrl, credentials: credentialsFor(run, clientId) },
      },
    },
    'conformance',
    ROOT,
  );
  const gateway = await startGateway(config, process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLog);
  step('started', gateway.url);
  const call = () =>
    send(`${gateway.url}/servers/conf/mcp`, request('tools/call', { name: 'test-tool', arguments: {} }), {
      authorization: `Bearer ${idToken ?? KEY}`,
    });
  try {
    for (let links = 0; links <= MAX_LINKS; links++) {
      const answer = await call();
      step('call', { status: answer.status, body: answer.body });
      const link: unknown = answer.body?.error?.data?.url;
      // Done when the gateway answers without asking for another link: what it answered is the scenario's to judge.
      if (typeof link !== 'string') return { exitCode: 0, steps };
      if (links === MAX_LINKS) break;
      const completed = await completeLink(browser, link);
      step('link', completed);
      // A person whose link did not connect stops there (the page says why): so does this client.
      if (completed.heading !== 'Connected to conf') return { exitCode: 1, steps };
    }
    step('gave up', `still handed a link after ${MAX_LINKS}`);
    return { exitCode: 1, steps };
  } catch (error) {
    step('failed', String((error as Error).stack ?? error));
    return { exitCode: 1, steps };
  } finally {
    await gateway.close();
    step('closed', gateway.url); // the outcome's steps array is this one: the line lands after a return, too
  }
}

/**
 * The gateway's credentials for the scenario's server: its own service identity for the client_credentials
 * scenarios (the ext-auth extension: a secret, or a key it signs an assertion with), else each caller's account.
 */
function credentialsFor(run: ScenarioRun, clientId: string | undefined): Record<string, unknown> {
  const { client_secret: clientSecret, private_key_pem: privateKey, signing_algorithm: algorithm } = run.context;
  if (run.scenario.startsWith('auth/client-credentials-'))
    return { type: 'clientCredentials', clientId, clientSecret, privateKey, algorithm };
  if (run.context.idp_id_token !== undefined)
    return {
      type: 'tokenExchange',
      tokenEndpoint: run.context.idp_token_endpoint,
      clientId: run.context.idp_client_id,
      authMethod: 'none',
      idJag: { clientId, clientSecret },
    };
  return { type: 'oauth', ...(clientId && { clientId }), ...(clientSecret && { clientSecret }) };
}

/** auth.jwt accepting the person's ID token from the scenario's IdP (whose key it recovers: conformance-idp-key.ts). */
function idpJwt(run: ScenarioRun): Record<string, unknown> {
  const jwksFile = `${tempDir('conformance-idp-')}/jwks.json`;
  writeFileSync(jwksFile, JSON.stringify(verifyingKeySet(run.context.idp_id_token!)));
  return { issuer: run.context.idp_issuer, audience: run.context.idp_client_id, jwksFile, algorithms: ['ES256'] };
}

/** Opens the link, confirms it, and follows the redirects to wherever they end: that page's URL, status and heading. */
async function completeLink(browser: Browser, link: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(link);
    const confirmed = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: /Connect conf/ }).click();
    const confirmStatus = (await confirmed).status();
    await page.waitForLoadState('load');
    const heading = await page
      .locator('h1')
      .first()
      .textContent()
      .catch(() => null);
    return { confirmStatus, landed: page.url(), heading };
  } finally {
    await context.close();
  }
}
