/**
 * SHA-256 of a string's UTF-8 bytes, as hex (FIPS 180-4). The keys the
 * command and the instance derive at start (the socket's path from the state
 * dir, a config home's name) are hashed here rather than with node:crypto,
 * whose load is ~5 ms of every process that needs nothing else of it. It
 * equals `createHash("sha256").update(text).digest("hex")` byte for byte
 * (test/unit/sha256.test.ts); for bulk data use node:crypto.
 */
export function sha256Hex(text: string): string {
  let hex = "";
  for (const byte of sha256(text)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** The digest's 32 bytes. */
export function sha256(text: string): Uint8Array {
  const data = new TextEncoder().encode(text);
  // The message, a 1 bit, zeros, and its length in bits as 64 bits: whole blocks.
  const blocks = new Uint8Array(Math.ceil((data.length + 9) / 64) * 64);
  blocks.set(data);
  blocks[data.length] = 0x80;
  const view = new DataView(blocks.buffer);
  const bits = data.length * 8;
  view.setUint32(blocks.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(blocks.length - 4, bits >>> 0);
  const h = Uint32Array.from(INITIAL);
  const w = new Uint32Array(64);
  for (let at = 0; at < blocks.length; at += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(at + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
      const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
      w[i] = w[i - 16]! + s0 + w[i - 7]! + s1;
    }
    let [a, b, c, d, e, f, g, k] = h as unknown as number[];
    for (let i = 0; i < 64; i++) {
      const t1 =
        k! +
        (rotr(e!, 6) ^ rotr(e!, 11) ^ rotr(e!, 25)) +
        ((e! & f!) ^ (~e! & g!)) +
        ROUND[i]! +
        w[i]!;
      const t2 = (rotr(a!, 2) ^ rotr(a!, 13) ^ rotr(a!, 22)) + ((a! & b!) ^ (a! & c!) ^ (b! & c!));
      k = g;
      g = f;
      f = e;
      e = (d! + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a!;
    h[1]! += b!;
    h[2]! += c!;
    h[3]! += d!;
    h[4]! += e!;
    h[5]! += f!;
    h[6]! += g!;
    h[7]! += k!;
  }
  const digest = new Uint8Array(32);
  const out = new DataView(digest.buffer);
  for (let i = 0; i < 8; i++) out.setUint32(i * 4, h[i]!);
  return digest;
}

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The first `n` primes. */
function primes(n: number): number[] {
  const out: number[] = [];
  for (let p = 2; out.length < n; p++) {
    let prime = true;
    for (let i = 0; prime && out[i]! * out[i]! <= p; i++) prime = p % out[i]! !== 0;
    if (prime) out.push(p);
  }
  return out;
}

/** The standard's constants: the first 32 bits of the fractional parts of the
 * square roots of the first 8 primes, and of the cube roots of the first 64. */
const fraction32 = (x: number) => Math.floor((x - Math.floor(x)) * 2 ** 32);
const INITIAL = Uint32Array.from(primes(8), (p) => fraction32(Math.sqrt(p)));
const ROUND = Uint32Array.from(primes(64), (p) => fraction32(Math.cbrt(p)));
