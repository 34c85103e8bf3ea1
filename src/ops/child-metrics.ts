// Per-child metrics of a pooled server (`instances` > 1): each child's state, restarts and requests in
// flight, labelled by server and child index. A server of one child has no such series: its upstream_*
// metrics already say everything.
import type { Registry } from 'prom-client';
import { gaugeAtScrape, counterAtScrape } from './scraped.js';

const PREFIX = 'mcp_gateway_';

export interface ChildSnapshot {
  state: string;
  restarts: number;
  inFlight: number;
}

export interface PooledSnapshot {
  name: string;
  children?: readonly ChildSnapshot[];
}

export function addChildMetrics(
  register: Registry,
  upstreams: () => Iterable<PooledSnapshot>,
  states: readonly string[],
): void {
  const eachChild = (visit: (server: string, child: string, snapshot: ChildSnapshot) => void): void => {
    for (const upstream of upstreams()) {
      const children = upstream.children ?? [];
      for (let index = 0; index < children.length; index++) visit(upstream.name, String(index), children[index]!);
    }
  };
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_child_state`,
    help:
      `State of each child of a pooled server (instances): 1 for the current one of ${states.join('|')}, 0 for ` +
      `the others.`,
    labelNames: ['server', 'child', 'state'],
    fill(record) {
      eachChild((server, child, snapshot) => {
        for (const state of states) record({ server, child, state }, snapshot.state === state ? 1 : 0);
      });
    },
  });
  counterAtScrape(register, {
    name: `${PREFIX}upstream_child_restarts_total`,
    help: 'Restarts of each child of a pooled server since it was started.',
    labelNames: ['server', 'child'],
    fill(record) {
      eachChild((server, child, snapshot) => record({ server, child }, snapshot.restarts));
    },
  });
  gaugeAtScrape(register, {
    name: `${PREFIX}upstream_child_in_flight`,
    help: 'Requests each child of a pooled server is serving now (the pool sends the next one to the least busy).',
    labelNames: ['server', 'child'],
    fill(record) {
      eachChild((server, child, snapshot) => record({ server, child }, snapshot.inFlight));
    },
  });
}
