// src/notify/: how a change reaches listen streams: upstreams' list changes (through the cache, so every
// replica hears them), the listen hub behind subscriptions/listen, and resource subscriptions kept told.
export { createListenHub, EVERY_LIST, followUpstreamChanges } from './list-changes.js';
export type { LegacyStream, ListenAccess, ListenHub } from './listen-hub.js';
export { ResourceWatch } from './resource-watch.js';
export type { UpstreamWatch } from './upstream-listen.js';
