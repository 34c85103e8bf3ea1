// What a person does with a connect link, in headless Chromium: open it (a GET: the gateway's page, which spends
// nothing), confirm "Connect <server>" (the POST that spends it and binds this browser), sign in
// at the test's oidc-provider (test/fixtures/oidc.ts: any password), consent, and land on the gateway's
// callback, whose heading says how it went. The flags every e2e test launches Chromium with live here too.
import { chromium as playwright, type Browser, type Page } from 'playwright-core';

/** The flags the e2e tests run Chromium with: headless, and nothing of its own on the network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Headless Chromium at `executablePath` (a `chromium()` need's path, from test/services.ts). */
export function launchChromium(executablePath: string): Promise<Browser> {
  return playwright.launch({ executablePath, args: CHROMIUM_ARGS });
}

export interface LinkCompletion {
  /** The server the link connects (its confirmation button says "Connect <server>"). */
  server: string;
  /** Who signs in at the authorization server. */
  login: string;
  /** Sees the page before it opens the link (to record the requests the browser makes). */
  watch?: (page: Page) => void;
}

/** Returns the heading of the gateway's callback page ("Connected to crm", or what went wrong). */
export async function completeConnectLink(
  browser: Browser,
  link: string,
  { server, login, watch }: LinkCompletion,
): Promise<string> {
  const context = await browser.newContext();
  const page = await context.newPage();
  watch?.(page);
  try {
    await page.goto(link);
    await page.getByRole('button', { name: new RegExp(`Connect ${server}`) }).click();
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]').click(); // consent
    await page.waitForURL(/\/connect\/callback/);
    return (await page.locator('h1').textContent()) ?? '';
  } finally {
    await context.close();
  }
}
