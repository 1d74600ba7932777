// How a daemon process is started, wherever one is (the CLI's background
// start, `npm start`'s literal copy of it, the benchmarks). Both settings
// must be there before the process starts: V8 sizes its heap and glibc its
// arenas once.
//
// - A young generation of 2 MB semi-spaces instead of 16: a burst of messages
//   otherwise leaves ~55 MB of nursery resident.
// - At most two malloc arenas: each thread that allocates (the search
//   worker's SQLite, libuv's pool) would otherwise keep an arena of its own,
//   ~55 MB after a burst, and glibc rarely returns it.
// - Threads sized to this 2-core class of machine: V8's platform pool (4 by
//   default) and libuv's (4; the daemon's file I/O is small and rare) at 2
//   each, which takes an idle daemon from 11 threads to 7.

export const DAEMON_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--v8-pool-size=2"];

/** Set by the daemon itself once it serves: V8 optimises a function after
 * about this many bytes of its bytecode have run (66 KB by default). The
 * message path is many small functions each run once per message, so at the
 * default a fresh instance ran its first ~6,000 messages mostly unoptimised
 * (CPU per message 315 µs falling to 120); at an eighth the first 2,200
 * take ~180. Set at the start instead, it made the start ~19 ms slower. */
export const SERVING_V8_FLAGS = "--interrupt-budget=8192";

/** The daemon's environment: `env` with the limits above, unless it sets them. */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: "2", UV_THREADPOOL_SIZE: "2", ...env };
}
