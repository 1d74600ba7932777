import { readFileSync } from "node:fs";
// Small timing helpers shared by every benchmark group. Numbers are medians of
// several rounds so one descheduled round on this 2-core machine does not skew
// the report.

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Nanoseconds per call of `fn`, median over `rounds` rounds of `iterations`. */
export function nsPerOp(fn: () => unknown, iterations: number, rounds = 7): number {
  for (let i = 0; i < Math.min(iterations, 10_000); i++) fn(); // warm up the JIT
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    perRound.push(Number(process.hrtime.bigint() - t0) / iterations);
  }
  return median(perRound);
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Resident memory of a process now, in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** CPU time (user + system) of a process so far, in ms (Linux /proc). */
export function cpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}
