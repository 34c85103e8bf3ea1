// bridge/pool/: `instances: N` on a stdio server, N children of one command behind one Upstream. Loaded (this
// face, with import()) only for a server of more than one instance, or with a per-caller child's pool.
export { PooledUpstream } from './pooled-upstream.js';
