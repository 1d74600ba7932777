// Load for the churn benchmark, from a process of its own so the measuring
// side's event loop stays free: `count` sessions, each connecting, greeting
// and leaving, started at `rate` per second with at most `window` at once.
// Tells its parent { done, ms, failed } when the last one has closed.
import { randomUUID } from "node:crypto";
import { connect } from "node:net";

const [socket, count, rate, window] = [
  process.argv[2],
  Number(process.argv[3]),
  Number(process.argv[4]),
  Number(process.argv[5]),
];

let started = 0;
let closed = 0;
let inFlight = 0;
let failed = 0;

function one() {
  const sid = randomUUID();
  const s = connect(socket);
  inFlight++;
  s.once("connect", () => {
    const hello = { op: "hello", request_id: "h", role: "session", protocol_version: 3, sid };
    s.write(`${JSON.stringify({ ...hello, repo: "churn", ws: sid.slice(0, 8), cwd: "/churn" })}\n`);
  });
  let got = "";
  s.on("data", (c) => {
    got += c.toString();
    if (!got.includes("\n")) return;
    if (!got.startsWith('{"ok":true')) failed++;
    s.end();
  });
  s.once("error", () => failed++);
  s.once("close", () => {
    inFlight--;
    closed++;
    if (closed === count) {
      process.send({ done: true, ms: performance.now() - t0, failed });
      process.exit(0);
    }
  });
}

const t0 = performance.now();
const timer = setInterval(() => {
  const due = Math.min(count, Math.floor(((performance.now() - t0) / 1000) * rate));
  while (started < due && inFlight < window) {
    started++;
    one();
  }
  if (started === count) clearInterval(timer);
}, 5);
