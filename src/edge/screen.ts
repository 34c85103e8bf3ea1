// The checks every request meets before any route, MCP or operator: the Host a loopback gateway was
// reached by (DNS rebinding, host-check.ts) and single-valued headers sent twice (single-headers.ts).
// Both cost a Set lookup or a short scan and allocate nothing when the request passes.
import type { IncomingMessage } from 'node:http';
import { ErrorCode } from '../../protocol/jsonrpc.js';
import type { HostCheck } from './host-check.js';
import { quoted } from './name-bounds.js';
import { reject, type Rejection } from './rejection.js';
import { repeatedSingleHeader } from './single-headers.js';

export function screenRequest(incoming: IncomingMessage, hostAllowed: HostCheck | undefined): Rejection | undefined {
  if (hostAllowed && !hostAllowed(incoming.headers.host)) {
    return reject(
      403,
      null,
      ErrorCode.InvalidRequest,
      `Host ${quoted(incoming.headers.host ?? '')} is not this gateway's: on loopback it answers only loopback ` +
        `names; add the name to listen.allowedHosts if it is yours`,
    );
  }
  const repeated = repeatedSingleHeader(incoming.rawHeaders);
  if (repeated !== undefined) {
    return reject(400, null, ErrorCode.InvalidRequest, `The ${repeated} header was sent more than once; send it once`);
  }
  return undefined;
}
