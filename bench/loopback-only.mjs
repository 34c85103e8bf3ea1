// Preloaded (`node --import ./bench/loopback-only.mjs ...`) into a peer that has no host option
// (supergateway 4.0.0 calls app.listen(port), i.e. every interface): every listen() without an explicit
// host binds 127.0.0.1 instead, so the bench never opens a port beyond loopback. Only the process it is
// preloaded into is affected (it is passed on the command line, not through NODE_OPTIONS).
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    // listen(port[, host][, backlog][, cb]): force the host.
    const [port, ...rest] = args;
    const tail = typeof rest[0] === 'string' ? rest.slice(1) : rest;
    return listen.call(this, Number(port), '127.0.0.1', ...tail);
  }
  if (
    args[0] &&
    typeof args[0] === 'object' &&
    !('fd' in args[0]) &&
    !('path' in args[0]) &&
    !('_handle' in args[0]) &&
    !('handle' in args[0])
  ) {
    return listen.call(this, { ...args[0], host: '127.0.0.1' }, ...args.slice(1));
  }
  if (args.length === 0 || typeof args[0] === 'function') return listen.call(this, 0, '127.0.0.1', ...args);
  return listen.apply(this, args);
};
