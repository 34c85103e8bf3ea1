// Loaded (`node --import`) into the official conformance suite's CLI (@modelcontextprotocol/conformance) and into
// the client it runs (test/e2e/conformance-client.ts), for three reasons:
// - the CLI imports `globSync` from `fs`, which Node 20 lacks; only its `tier-check` command calls it, so the
//   package gets `fs` with a `globSync` that says so when called (Node 22 has its own and gets that);
// - its scenario servers listen on every interface (`listen(0)`): here a listen without a host binds 127.0.0.1;
// - nothing may leave this machine: a connection to an address that is not loopback is refused before it is
//   made, and written on stderr as `conformance-preload: refused …`, which the test looks for.
import { _normalizeArgs, BlockList, isIP, Server, Socket } from 'node:net';
import { register } from 'node:module';

const FS_WITH_GLOB = `data:text/javascript,${encodeURIComponent(`
  import fs from 'node:fs';
  export * from 'node:fs';
  export default fs;
  export const globSync =
    fs.globSync ??
    (() => {
      throw new Error('fs.globSync needs Node 22: the conformance CLI uses it only for tier-check');
    });
`)}`;

register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') &&
          context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/'))
        return { url: ${JSON.stringify(FS_WITH_GLOB)}, shortCircuit: true };
      return next(specifier, context);
    }
  `)}`,
);

// Where every listen without a host ends up (listen(0), listen({ port })): Node binds every interface there, at once.
// Bound to 127.0.0.1 instead, still at once, so that `server.address()` right after `listen(0)` (as the scenarios
// read it) still has the port.
const listenHandle = Server.prototype._listen2;
Server.prototype._listen2 = function (address, port, addressType, backlog, fd, ...rest) {
  if (address === null && fd === undefined) return listenHandle.call(this, '127.0.0.1', port, 4, backlog, fd, ...rest);
  return listenHandle.call(this, address, port, addressType, backlog, fd, ...rest);
};

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
const loopback = (ip) => {
  const family = isIP(ip);
  return family === 4 ? LOOPBACK.check(ip, 'ipv4') : family === 6 ? LOOPBACK.check(ip, 'ipv6') : false;
};

// Every TCP client socket, whoever makes it (undici's fetch, http.request, a library's own), is checked before it
// connects: an address literal must be loopback, a name must be localhost (no lookup leaves the machine either).
const connect = Socket.prototype.connect;
Socket.prototype.connect = function (...args) {
  // net.connect passes its arguments already normalized (an array); a direct socket.connect passes them raw.
  const [options] = Array.isArray(args[0]) ? args[0] : _normalizeArgs(args);
  const host = options.path === undefined ? (options.host ?? 'localhost') : undefined;
  if (host === undefined || host === 'localhost' || loopback(host)) return connect.apply(this, args);
  process.stderr.write(
    `conformance-preload: refused a connection to ${host}:${options.port} (nothing leaves loopback)\n`,
  );
  process.nextTick(() =>
    this.destroy(new Error(`conformance-preload: no connection to ${host}; tests stay on loopback`)),
  );
  return this;
};
