/**
 * Fresh reads, coalesced: each call resolves with a read that *started after*
 * the call, so nothing written before the caller asked is missed, yet callers
 * that ask together share one read. While a read runs, every new caller waits
 * for the single read that follows it.
 */
export function freshReads<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const p = read().finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  return () => {
    if (running === undefined) return start();
    if (next === undefined) {
      const after = running.then(
        () => undefined,
        () => undefined,
      );
      next = after.then(() => {
        next = undefined;
        return start();
      });
    }
    return next;
  };
}
