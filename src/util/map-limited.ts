/** Run `fn` over `items`, at most `limit` at a time; results keep the
 * items' order. The one bounded-concurrency map of the code base (file ops'
 * stats, the board sync's gh calls). */
export async function mapLimited<T, R>(
  items: T[],
  limit: number,
  fn: (t: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
