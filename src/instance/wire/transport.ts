/**
 * The surface every transport (Unix socket, WebSocket) gives the layer above:
 * a reader of whole frames and a writer of frames. A transport moves bytes and
 * splits frames; it never reads `op`, never builds a connection, and nothing
 * above this file knows which transport it has.
 */

/** What a reader reports: each complete frame, a frame that grew past the
 * ceiling (never buffered), the peer's end of input (a half-close: it still
 * reads), and the end of the stream. */
export interface FrameHandlers {
  frame(line: string): void;
  oversized(): void;
  /** After the last frame the peer sent; the stream stays open for replies. */
  ended(): void;
  closed(): void;
}

/**
 * The inbound half. `listen` is called once, at once: frames that arrive
 * before it would be lost. Pausing stops the flow of frames (back-pressure on
 * the peer) without closing anything. The transports read through `Inbound`
 * (inbound.ts), which shares reading fairly among connections.
 */
export interface FrameReader {
  listen(handlers: FrameHandlers): void;
  pause(): void;
  resume(): void;
}

/**
 * The outbound half. `write` hands one frame (no newline) to the OS side and,
 * when given `done`, tells once whether it got there (true: the bytes are in
 * the kernel's socket buffer, where a crash of this process no longer loses
 * them; false: the stream ended first). `backlog` is what it accepted and has
 * not yet handed on; `onDrain` fires when that backlog empties.
 *
 * Ownership: the listener that accepted the socket owns it; `close()` asks it
 * to end the stream (and to cut it shortly after if the peer never reads).
 */
/** Told whether a frame reached the OS side (see FrameWriter.write). */
export type Written = (ok: boolean) => void;

export interface FrameWriter {
  write(line: string, done?: Written): void;
  backlog(): number;
  onDrain(listener: () => void): void;
  /** A WebSocket closes with `code` and `reason` when given (the mesh's
   * 4000-range codes, DR-0047); the local socket ignores them. */
  close(code?: number, reason?: string): void;
}

import type { PeerEndpoint } from "./peer-endpoint.js";

export type TransportKind = "uds" | "ws";

/** One accepted peer, as the transport hands it up. */
export interface Transport {
  readonly kind: TransportKind;
  readonly reader: FrameReader;
  readonly writer: FrameWriter;
  /** Where the peer's process can be looked up, when known. */
  readonly peer?: PeerEndpoint;
  /** Present when a person's access token opened it (WebSocket only). */
  readonly person?: PersonPrincipal;
  /** Opened with the mesh subprotocol and no credential: it may only greet
   * as an instance and prove its endpoint (contract §8.1, DR-0047). */
  readonly meshOnly?: true;
}

/**
 * What a connection opened with a person's access token carries: the gate
 * that admitted it attaches it (http/gate.ts, an auth/person-session.ts), and
 * the handlers read who it is and until when, and move that deadline
 * (`auth_refresh`). Nothing here knows how a token is checked.
 */
export interface PersonPrincipal {
  readonly sub: string;
  readonly expiresAt: number;
  /** Move the deadline (never back). */
  extend(expiresAt: number): void;
}

/** The WebSocket subprotocol a mesh peer dials with (it holds no owner
 * credential and no access token; the handshake is its proof). */
export const MESH_SUBPROTOCOL = "ccmsg.mesh";

/** Where a listener hands each accepted peer. */
export type Accept = (transport: Transport) => void;
