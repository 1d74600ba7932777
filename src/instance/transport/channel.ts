import type { Socket } from "node:net";
import type { WebSocket } from "ws";

/**
 * What a connection needs from a transport: write a line, know how much is
 * still waiting to reach the OS, hear when that drains, and apply
 * back-pressure to the reader. Both transports produce the same surface, and
 * nothing above this file knows which one it has.
 *
 * Ownership: the listener that accepted the socket closes it; `close()` here is
 * that owner's call, made through the connection.
 */
export interface Channel {
  readonly kind: "uds" | "ws";
  /** Write one frame; the newline is added here. */
  write(line: string): void;
  /** Bytes accepted by `write` but not yet handed to the OS. */
  backlog(): number;
  onDrain(listener: () => void): void;
  pauseReading(): void;
  resumeReading(): void;
  close(): void;
}

export class SocketChannel implements Channel {
  readonly kind = "uds";
  constructor(private readonly socket: Socket) {}
  write(line: string): void {
    if (!this.socket.destroyed) this.socket.write(`${line}\n`);
  }
  backlog(): number {
    return this.socket.writableLength;
  }
  onDrain(listener: () => void): void {
    this.socket.on("drain", listener);
  }
  pauseReading(): void {
    this.socket.pause();
  }
  resumeReading(): void {
    this.socket.resume();
  }
  close(): void {
    this.socket.end();
    // A peer that never reads would keep a half-closed socket forever.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }
}

export class WebSocketChannel implements Channel {
  readonly kind = "ws";
  constructor(
    private readonly ws: WebSocket,
    private readonly raw: Socket,
  ) {}
  write(line: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(`${line}\n`);
  }
  backlog(): number {
    return this.ws.bufferedAmount;
  }
  onDrain(listener: () => void): void {
    // `ws` has no drain event of its own; its socket's is the same signal.
    this.raw.on("drain", listener);
  }
  pauseReading(): void {
    this.ws.pause();
  }
  resumeReading(): void {
    this.ws.resume();
  }
  close(): void {
    this.ws.close(1001, "instance stopping");
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }
}
