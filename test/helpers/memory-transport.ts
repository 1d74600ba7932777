import type { FrameHandlers, Transport } from "../../src/instance/wire/transport.js";

/**
 * A transport in memory: what the connection writes is recorded, frames are
 * fed in by the test, and the writer's backlog is set by hand to play a peer
 * that stops reading.
 */
export interface MemoryTransport extends Transport {
  readonly lines: string[];
  /** The parsed frames written so far. */
  frames(): Record<string, unknown>[];
  /** Feed one inbound frame. */
  feed(line: string): void;
  /** Pretend this many bytes wait in the OS-side buffer. */
  setBacklog(bytes: number): void;
  /** Let the buffer empty (backlog 0) and fire drain. */
  drain(): void;
  readonly paused: boolean;
  readonly closedByInstance: boolean;
  /** The peer hangs up. */
  hangUp(): void;
}

export function memoryTransport(): MemoryTransport {
  const lines: string[] = [];
  let handlers: FrameHandlers | undefined;
  let backlog = 0;
  const drainListeners: (() => void)[] = [];
  const state = { paused: false, closedByInstance: false };
  return {
    kind: "uds",
    lines,
    frames: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    reader: {
      listen: (h) => {
        handlers = h;
      },
      pause: () => {
        state.paused = true;
      },
      resume: () => {
        state.paused = false;
      },
    },
    writer: {
      write: (line, done) => {
        lines.push(line);
        if (done !== undefined) queueMicrotask(() => done(true));
      },
      backlog: () => backlog,
      onDrain: (l) => drainListeners.push(l),
      close: () => {
        state.closedByInstance = true;
      },
    },
    feed: (line) => handlers?.frame(line),
    setBacklog: (bytes) => {
      backlog = bytes;
    },
    drain: () => {
      backlog = 0;
      for (const l of drainListeners) l();
    },
    get paused() {
      return state.paused;
    },
    get closedByInstance() {
      return state.closedByInstance;
    },
    hangUp: () => handlers?.closed(),
  };
}
