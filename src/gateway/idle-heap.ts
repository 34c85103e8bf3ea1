// Start-up leaves V8's young generation grown to its ceiling (16 MB a semi-space on 64 bits: loading the
// modules and starting the upstreams allocates tens of MB in a second, most of it long-lived, and each
// scavenge that keeps much doubles it), and nothing an idle gateway does gives it back. V8 shrinks it only
// after a full collection at a low allocation rate; its memory reducer starts one when it judges the process
// idle, but judges by the allocation rate averaged since start-up, so on a loaded machine that took from 10 s
// to more than a minute, and an idle gateway held about 16 MB more in the meantime (`npm run bench:idle`).
//
// So once start-up is over and no request has come for a while, the gateway asks for that collection itself.
// A gateway that is serving is left alone: its young generation is in use, and a pause there would cost
// a caller; V8's own heuristics take over from then on. The collection is V8's gc(), which Node gives only to
// a context made while --expose-gc is set: the flag is set, one throwaway context made, and the flag unset,
// so no other code (nor a later vm context) sees a gc function. Whether V8 shrinks the young generation in
// that collection is still its call (it does when allocation has been low for its last few seconds, which
// is why the look waits for a quiet spell, and looks again while it stays grown).
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How often to look, and how many times: after the last look, V8 is left to itself. */
const LOOK_EVERY_MS = 5_000;
const LOOKS = 12;
/** V8 starts the young generation at 1 MB a semi-space (about 1 MB of space); past 4 MB it has grown. */
const GROWN_BYTES = 4 * 2 ** 20;

/** The young generation as this module sees it: its size, and the collection that may shrink it. */
export interface YoungGeneration {
  bytes(): number;
  collect(): void;
}

export interface IdleHeapTrim {
  stop(): void;
}

const V8_YOUNG: YoungGeneration = {
  bytes: () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
  collect: () => {
    fullCollection();
    regrowInOneStep();
  },
};

/**
 * Once shrunk, the young generation must grow back when calls come: V8 doubles it each time a scavenge has
 * kept more than its size, and under load it did not grow back soon enough (bench:ab, a gateway trimmed
 * before its load: ×1.06 to ×1.09 the CPU per call of one whose start-up had grown it). Growing by 16 at
 * once, it is back at its ceiling after the first scavenges that keep much, as start-up had left it; idle,
 * nothing survives, and it stays small.
 */
function regrowInOneStep(): void {
  setFlagsFromString('--semi-space-growth-factor=16');
}

/**
 * Looks every LOOK_EVERY_MS; at a look that finds no request started since the one before
 * (`requestsStarted` counts every request the edge began) and the young generation grown, collects. Done once
 * it is small (whoever shrank it); a collection that left it grown (V8 judged the last seconds' allocation
 * too high: upstreams still starting on a loaded machine) is tried again at a later quiet look, up to LOOKS
 * looks in all. Timers do not keep the process alive.
 */
export function trimHeapWhenIdle(requestsStarted: () => number, young: YoungGeneration = V8_YOUNG): IdleHeapTrim {
  let looks = 0;
  let seen = requestsStarted();
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    looks++;
    const now = requestsStarted();
    const quiet = now === seen;
    seen = now;
    if (quiet && young.bytes() > GROWN_BYTES) young.collect();
    const done = young.bytes() <= GROWN_BYTES || looks >= LOOKS;
    timer = done ? undefined : setTimeout(look, LOOK_EVERY_MS).unref();
  };
  timer = setTimeout(look, LOOK_EVERY_MS).unref();
  return { stop: () => clearTimeout(timer) };
}

/** Free space in the old generation's pages past which the collection compacts: four of its 256 KB pages. */
const COMPACT_FROM_BYTES = 2 ** 20;

/**
 * One full garbage collection, in which V8 also shrinks the young generation if allocation has been low; and,
 * when it leaves the old generation's pages holding more than COMPACT_FROM_BYTES free, a second that moves the
 * live objects together so the pages left part full are given back. Without that, whether they were given back
 * depended on who collected first: V8's memory reducer compacts (its collections reduce memory), a plain gc()
 * moves only pages at least 70% empty, at most 4 MB of them, and the pages module loading leaves part full are
 * not among them; an idle gateway held about 3 MB more whenever the trim's collection came first (bench:idle,
 * 10 upstreams: 68.0-71.3 MB against 68.0-68.9 MB compacting). --compact-on-every-full-gc (a V8 flag on Node 20,
 * 22 and 24) makes that second collection move every page; it is unset at once after, as --expose-gc is, so no
 * collection under load pays for moving the whole heap, and a look that finds the old generation tight does not
 * move it again.
 */
export function fullCollection(): void {
  setFlagsFromString('--expose-gc');
  let gc: () => void;
  try {
    gc = runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  gc();
  // Only a collection knows what is free (until it runs, the dead count as used): a second one moves the pages.
  if (oldGenerationFreeBytes() <= COMPACT_FROM_BYTES) return;
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

function oldGenerationFreeBytes(): number {
  const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  return old ? old.space_size - old.space_used_size : 0;
}
