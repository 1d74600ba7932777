/** A stream whose writes can be held and handed on as one. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/** The streams written to in this turn of the event loop. */
const corked = new Set<Corkable>();

/**
 * Hold `stream`'s writes until the end of this turn: the frames written to one
 * connection in a turn (a slice's replies, a batch's answers once committed, a
 * fan-out's pushes) go to the OS in one write instead of one each. Let go on a
 * tick queued from a microtask, which runs once every microtask queued before
 * it has run (the replies an await resumes with among them).
 */
export function corkForTurn(stream: Corkable): void {
  if (corked.has(stream)) return;
  if (corked.size === 0) queueMicrotask(() => process.nextTick(uncorkAll));
  corked.add(stream);
  stream.cork();
}

function uncorkAll(): void {
  for (const stream of corked) stream.uncork();
  corked.clear();
}
