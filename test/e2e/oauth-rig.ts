// What the OAuth end-to-end tests stand on: oidc-provider as the authorization server (test/fixtures/oidc.ts),
// an upstream trusting it when the test has one, the gateway (or replicas behind one public URL) and headless
// Chromium for the person's part. The gateway's ports are chosen before the provider starts because the
// client's redirect_uri must name the gateway's callback. Started in that order and closed in the reverse;
// a start that fails part way closes what it had started.
import type { Browser } from 'playwright-core';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import type { Log } from '../../infra/log.js';
import { startOidc, type Oidc, type OidcClient } from '../fixtures/oidc.js';
import { unusedPort } from '../ports.js';
import { completeConnectLink, launchChromium, type LinkCompletion } from './connect-browser.js';
import { type Answer, request, ROOT, send } from './harness.js';

interface Closable {
  close(): Promise<void>;
}

/** Where a gateway's config is written: its own port, and what it points at. */
export interface RigPlace<U> {
  port: number;
  /** The public URL of every replica: the first one's address. */
  publicUrl: string;
  oidc: Oidc;
  upstream: U;
}

export interface OAuthRigOptions<U> {
  /** The Chromium to launch (a `chromium()` need's path, checked by the caller). */
  browserPath: string;
  /** The gateway's client at the authorization server; its redirect_uri is the gateway's /connect/callback. */
  client: { client_id: string; client_secret: string };
  /** Further clients, after the gateway's (a sign-in client redirecting elsewhere on the gateway). */
  otherClients?: (publicUrl: string) => OidcClient[];
  /** The audience of callers' own tokens signed by the provider; 'unused' when the test signs none. */
  callerAudience?: string;
  /** Starts the upstream that trusts the provider's tokens (startIdentityServer, or a test's own). */
  upstream?: (issuer: string, jwksUrl: string) => Promise<U>;
  /** Gateways started, each on its own port, all behind the first one's public URL (1 unless said). */
  replicas?: number;
  /** Where the replicas listen, chosen by the test (a balancer's backends); free loopback ports unless said. */
  ports?: number[];
  /** The public URL the replicas share (a balancer in front of them); the first replica's address unless said. */
  publicUrl?: string;
  /** The raw config of the gateway at `place`; listen.port and listen.publicUrl are the rig's own. */
  config: (place: RigPlace<U>) => Record<string, unknown>;
  log: Log;
  /** The server whose connect links `connectInBrowser` completes. */
  server: string;
}

export interface OAuthRig<U> {
  publicUrl: string;
  oidc: Oidc;
  upstream: U;
  /** The first replica (the one the public URL names). */
  readonly gateway: RunningGateway;
  readonly gateways: readonly RunningGateway[];
  browser: Browser;
  /** Closes replica `index` (the first unless said) and starts it again from a freshly built config. */
  restartGateway(index?: number): Promise<RunningGateway>;
  /** Completes a link of the rig's server in the browser as `login`; the callback page's heading. */
  connectInBrowser(link: string, login: string, watch?: LinkCompletion['watch']): Promise<string>;
  close(): Promise<void>;
}

export async function startOAuthRig<U extends Closable | undefined = undefined>(
  options: OAuthRigOptions<U>,
): Promise<OAuthRig<U>> {
  const opened: Closable[] = [];
  const closeOpened = async () => {
    for (const item of opened.splice(0).reverse()) await item.close();
  };
  try {
    const ports: number[] = [...(options.ports ?? [])];
    while (ports.length < (options.replicas ?? 1)) ports.push(await unusedPort());
    const publicUrl = options.publicUrl ?? `http://127.0.0.1:${ports[0]}`;
    const oidc = await startOidc({
      clients: [
        { ...options.client, redirect_uris: [`${publicUrl}/connect/callback`] },
        ...(options.otherClients?.(publicUrl) ?? []),
      ],
      callerAudience: options.callerAudience ?? 'unused',
    });
    opened.push(oidc);
    const upstream = (await options.upstream?.(oidc.issuer, oidc.jwksUrl)) as U;
    if (upstream) opened.push(upstream);
    // The rig owns where each replica listens and the public URL they share; a test's listen keys go beside them.
    const configAt = (port: number) => {
      const config = options.config({ port, publicUrl, oidc, upstream });
      return { ...config, listen: { ...(config.listen as object | undefined), port, publicUrl } };
    };
    const startAt = (port: number) => startGateway(parseConfig(configAt(port), 'test', ROOT), options.log);
    const gateways: RunningGateway[] = [];
    // Closes the replicas in the list at closing time, so a restarted one is the one closed.
    opened.push({
      async close() {
        for (const gateway of gateways) await gateway.close();
      },
    });
    for (const port of ports) gateways.push(await startAt(port));
    const browser = await launchChromium(options.browserPath);
    opened.push(browser);
    return {
      publicUrl,
      oidc,
      upstream,
      get gateway() {
        return gateways[0]!;
      },
      gateways,
      browser,
      async restartGateway(index = 0) {
        await gateways[index]!.close();
        gateways[index] = await startAt(ports[index]!);
        return gateways[index];
      },
      connectInBrowser: (link, login, watch) =>
        completeConnectLink(browser, link, { server: options.server, login, watch }),
      close: closeOpened,
    };
  } catch (error) {
    await closeOpened();
    throw error;
  }
}

/**
 * A tools/call of `name` at `url` (a gateway's endpoint) with `token` as the bearer; `params` go beside name and
 * arguments.
 */
export function callToolAs(
  url: string,
  token: string,
  name: string,
  params: Record<string, unknown> = {},
): Promise<Answer> {
  return send(url, request('tools/call', { name, arguments: {}, ...params }), { authorization: `Bearer ${token}` });
}
