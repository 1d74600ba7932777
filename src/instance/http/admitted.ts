import type { PersonAuth, PersonToken } from "../auth/person-auth.js";
import { PersonSession } from "../auth/person-session.js";
import type { FrameReader, Transport } from "../wire/transport.js";
import type { AcceptedSocket } from "../wire/ws.js";

// What the gate (gate.ts) attaches to a WebSocket it admitted, before the
// connection layer gets it: the rules that outlive the upgrade.

/**
 * A mesh peer's socket: unauthenticated until it greets, so a socket that
 * never speaks is cut (the handshake's own timer runs from its greeting on),
 * and it may only greet as an instance and prove its endpoint (mesh/mesh.ts).
 */
export function meshOnly({ transport, onClose }: AcceptedSocket, greetingMs: number): Transport {
  const silent = setTimeout(() => transport.writer.close(4001, "no greeting"), greetingMs);
  silent.unref();
  onClose(() => clearTimeout(silent));
  const reader = beforeEachFrame(transport.reader, (line, serve) => {
    clearTimeout(silent);
    serve(line);
  });
  return { ...transport, reader, meshOnly: true };
}

/**
 * A person's socket (contract §9.1, §9.5): it closes at the access token's
 * deadline unless `auth_refresh` moves it (PersonSession), and when their
 * access is revoked; past the deadline no frame is served, whenever the
 * timer fires.
 */
export function personal(
  { transport, onClose }: AcceptedSocket,
  { sub, familyId, expiresAt }: PersonToken,
  people: PersonAuth,
): Transport {
  const session = new PersonSession(
    sub,
    familyId,
    expiresAt,
    () => people.now(),
    (why) => transport.writer.close(4001, why),
  );
  const untrack = people.track({ sub, familyId, close: () => session.close("access revoked") });
  onClose(() => {
    untrack();
    session.dispose();
  });
  const reader = beforeEachFrame(transport.reader, (line, serve) => {
    if (people.now() >= session.expiresAt) session.close("access token expired");
    else serve(line);
  });
  return { ...transport, reader, person: session };
}

/** `reader`, with `check` deciding on each frame whether it is served. */
function beforeEachFrame(
  reader: FrameReader,
  check: (line: string, serve: (line: string) => void) => void,
): FrameReader {
  return {
    ...reader,
    listen: (handlers) =>
      reader.listen({ ...handlers, frame: (line) => check(line, handlers.frame) }),
  };
}
