// The config keys issue #16 added, as zod schemas with errors that name the fix; config.ts places them.
import { z } from 'zod';
import { ENV_GLOB } from '../child-env.js';
import { peerProblem } from '../mrtr/index.js';
import { HOST_NAME } from '../../protocol/loopback.js';

/** servers.<name>.inheritEnv: variables of the gateway's environment this child also gets (globs allowed). */
export const inheritEnv = z
  .array(
    z
      .string()
      .regex(ENV_GLOB, 'name environment variables by letters, digits and _, with * or ? as wildcards, e.g. "AWS_*"'),
  )
  .default([]);

/** listen.allowedHosts: Host names served besides loopback ones while listening on loopback (DNS rebinding). */
export const allowedHosts = z
  .array(z.string().regex(HOST_NAME, 'a host name or address without scheme, port or path, e.g. "gateway.internal"'))
  .default([]);

/**
 * auth.operators: who may read /, /status.json and /metrics, and see details in /readyz and 404s (left out: nobody).
 */
export const operators = z
  .strictObject({ ids: z.array(z.string().min(1)).default([]), groups: z.array(z.string().min(1)).default([]) })
  .refine(
    (o) => o.ids.length + o.groups.length > 0,
    'name the ids or groups who may read /, /status.json and /metrics (left out, nobody may)',
  )
  .optional();

/**
 * mrtr.peers: where retries may be forwarded: host names, addresses or CIDRs (default: loopback and private addresses).
 */
export const peers = z
  .array(
    z.string().superRefine((peer, ctx) => {
      const problem = peerProblem(peer);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  )
  .default([]);
