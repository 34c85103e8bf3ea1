// src/mrtr/: MRTR across replicas: the calls this replica holds while a client answers, the signed
// requestState, and how a retry that lands on the wrong replica finds the one holding its call.
export { HeldCallRetries } from './held-call-retries.js';
export { HeldCall } from './held-call.js';
export type { CallEvent, HeldCalls } from './held-call.js';
export { CALLER_HEADER, digest } from './peer-trust.js';
export type { ForwardedCaller, PeerTrust } from './peer-trust.js';
export { peerProblem } from './peers.js';
export { requestDigest } from './request-state.js';
