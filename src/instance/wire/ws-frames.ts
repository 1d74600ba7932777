import type { Socket } from "node:net";

/** What a client's WebSocket stream is turned into. */
export interface WsStreamSink {
  /** Payload bytes of a data message (text or binary), unmasked, in order. */
  data(bytes: Buffer): void;
  /** The data message ended (its final fragment arrived). */
  messageEnd(): void;
  /** The raw bytes of control frames (close, ping, pong), to pass on. */
  control(bytes: Buffer): void;
  /** The client broke RFC 6455; nothing more is read. */
  violation(reason: string): void;
}

const MAX_HEADER = 14;

/**
 * Reads the frames a WebSocket client sends (RFC 6455 §5.2) as a stream: the
 * payload of a data message is unmasked and handed on as it arrives, so no
 * message is ever held whole. That is what lets a message of any size be
 * answered: the frame ceiling is enforced on the bytes by the line framer, as
 * on the local socket, instead of by a message-size cap that can only close
 * the connection (1009). Control frames are passed on byte for byte, so the
 * `ws` library still keeps pings, pongs and the close handshake.
 *
 * No extension is negotiated, so a set RSV bit is a violation, as is an
 * unmasked frame, an unknown opcode, a fragmented or long control frame, or
 * fragments out of order.
 */
export class WsFrameReader {
  private readonly header = Buffer.alloc(MAX_HEADER);
  private headerHave = 0;
  /** Payload bytes still to come in the current frame; -1 while reading a header. */
  private remaining = -1;
  private mask = Buffer.alloc(4);
  /** Offset into the current payload, for the mask. */
  private offset = 0;
  private control = false;
  private fin = false;
  /** Inside a data message whose final fragment has not arrived. */
  private fragmented = false;
  private failed = false;

  constructor(private readonly sink: WsStreamSink) {}

  /** Read a chunk the socket handed over; data payloads are unmasked in place. */
  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.failed) {
      if (this.remaining < 0) {
        at = this.readHeader(chunk, at);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      const piece = chunk.subarray(at, at + take);
      at += take;
      this.remaining -= take;
      if (this.control) {
        this.sink.control(piece);
      } else if (take > 0) {
        for (let i = 0; i < piece.length; i++) piece[i]! ^= this.mask[(this.offset + i) & 3]!;
        this.offset += take;
        this.sink.data(piece);
      }
      if (this.remaining === 0) this.frameDone();
    }
  }

  /** Collect header bytes from `chunk` at `at`; returns where reading stopped. */
  private readHeader(chunk: Buffer, at: number): number {
    while (at < chunk.length) {
      this.header[this.headerHave++] = chunk[at++]!;
      const need = this.headerLength();
      if (need !== undefined && this.headerHave === need) {
        this.startFrame(need);
        return at;
      }
    }
    return at;
  }

  /** The full header length, once enough of it is known. */
  private headerLength(): number | undefined {
    if (this.headerHave < 2) return undefined;
    const len7 = this.header[1]! & 0x7f;
    const ext = len7 === 126 ? 2 : len7 === 127 ? 8 : 0;
    return 2 + ext + ((this.header[1]! & 0x80) !== 0 ? 4 : 0);
  }

  private startFrame(headerLength: number): void {
    const h = this.header;
    const opcode = h[0]! & 0x0f;
    this.fin = (h[0]! & 0x80) !== 0;
    this.control = opcode >= 0x8;
    const len7 = h[1]! & 0x7f;
    const high = len7 === 127 ? h.readUInt32BE(2) : 0;
    const length =
      len7 === 126 ? h.readUInt16BE(2) : len7 === 127 ? high * 2 ** 32 + h.readUInt32BE(6) : len7;
    const broken = this.violationOf(opcode, length, high);
    if (broken !== undefined) {
      this.failed = true;
      this.sink.violation(broken);
      return;
    }
    if (this.control) {
      this.sink.control(Buffer.from(h.subarray(0, headerLength)));
    } else {
      this.fragmented = !this.fin;
      h.copy(this.mask, 0, headerLength - 4, headerLength);
      this.offset = 0;
    }
    this.headerHave = 0;
    this.remaining = length;
    if (length === 0) this.frameDone();
  }

  /** What is wrong with the frame just read, if anything. */
  private violationOf(opcode: number, length: number, high: number): string | undefined {
    const h = this.header;
    if (high > 0x1fffff) return "payload length beyond 2^53";
    if ((h[0]! & 0x70) !== 0) return "RSV bit set without an extension";
    if ((h[1]! & 0x80) === 0) return "client frame not masked";
    if (this.control) {
      if (opcode > 0xa) return `unknown opcode ${opcode}`;
      if (!this.fin || length > 125) return "control frame fragmented or too long";
      return undefined;
    }
    if (opcode > 0x2) return `unknown opcode ${opcode}`;
    if (opcode === 0 && !this.fragmented) return "continuation without a message";
    if (opcode !== 0 && this.fragmented) return "new message inside a fragmented one";
    return undefined;
  }

  private frameDone(): void {
    this.remaining = -1;
    if (!this.control && this.fin) this.sink.messageEnd();
  }
}

/**
 * Put a `WsFrameReader` between a socket and the `ws` library that upgraded
 * it: the library's own data listener (its receiver) then sees only control
 * frames. Call synchronously in the upgrade callback, before any data flows.
 * Returns false, touching nothing, if the socket does not hold exactly the
 * library's one listener (a `ws` this code does not know). `inOrder` decides
 * when a control frame's bytes reach the library: the data read before it
 * may still wait to be served, and a close must not overtake it.
 */
export function interceptWebSocketData(
  raw: Socket,
  sink: Omit<WsStreamSink, "control">,
  inOrder: (pass: () => void) => void = (pass) => pass(),
): boolean {
  const theirs = raw.listeners("data") as ((chunk: Buffer) => void)[];
  if (theirs.length !== 1) return false;
  const receiver = theirs[0]!;
  raw.removeListener("data", receiver);
  const reader = new WsFrameReader({
    ...sink,
    control: (bytes) => inOrder(() => receiver.call(raw, bytes)),
  });
  raw.on("data", (chunk: Buffer) => reader.push(chunk));
  return true;
}
