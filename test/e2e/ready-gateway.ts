// A test gateway whose upstreams are up before the test speaks to it. startGateway returns once it listens,
// while its stdio children (tsx fixtures take seconds on a loaded machine) are still starting; a call routed
// on /mcp then answers "Unknown tool: …, but it is starting", which a test of policy or limits would misread.
import type { RunningGateway } from '../../src/gateway.js';
import { startTestGateway, until } from './harness.js';

/** Generous: six test files start their fixtures at once on two cores in CI. */
const READY_WITHIN_MS = 60_000;

/** Waits until /readyz says every required upstream is ready; fails naming what was not. */
export async function untilReady(gateway: RunningGateway): Promise<void> {
  let last = '';
  const ready = await until(
    async () => {
      const response = await fetch(`${gateway.url}/readyz`);
      last = `${response.status} ${await response.text()}`;
      return response.status === 200;
    },
    READY_WITHIN_MS,
    50,
  );
  if (!ready)
    throw new Error(`the gateway's upstreams were not ready within ${READY_WITHIN_MS} ms; /readyz said ${last}`);
}

/** startTestGateway, then untilReady. */
export async function startReadyGateway(...args: Parameters<typeof startTestGateway>): Promise<RunningGateway> {
  const gateway = await startTestGateway(...args);
  try {
    await untilReady(gateway);
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return gateway;
}
