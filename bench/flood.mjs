// Load for the fairness benchmark, from a process of its own so its work never
// delays the client being measured: `connections` sockets each keep up to
// `window` requests in flight, flat out, until told to stop. A request is one
// `instance_ping` (mode "valid") or one line that is not JSON ("invalid");
// every one is answered with exactly one line, so replies are counted by
// newlines, never parsed.
import { connect } from "node:net";

const [path, connections, window, mode] = [
  process.argv[2],
  Number(process.argv[3]),
  Number(process.argv[4]),
  process.argv[5],
];
const BATCH = 100;
const line =
  mode === "invalid"
    ? "this is not json, as a fuzzer sends\n"
    : '{"op":"instance_ping","request_id":"f"}\n';
const batch = Buffer.from(line.repeat(BATCH));
let replies = 0;
let markedAt = 0;
let markedReplies = 0;
const sockets = [];

function flood(socket) {
  let inFlight = 0;
  const fill = () => {
    while (inFlight + BATCH <= window) {
      socket.write(batch);
      inFlight += BATCH;
    }
  };
  socket.on("data", (chunk) => {
    let n = 0;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) n++;
    inFlight -= n;
    replies += n;
    fill();
  });
  socket.on("error", () => {});
  fill();
}

process.on("message", (m) => {
  if (m === "go") for (const s of sockets) flood(s);
  if (m === "mark") {
    markedAt = performance.now();
    markedReplies = replies;
  }
  if (m === "stop") {
    const ms = performance.now() - markedAt;
    for (const s of sockets) s.destroy();
    process.send({ replies: replies - markedReplies, ms }, () => process.exit(0));
  }
});

await Promise.all(
  Array.from(
    { length: connections },
    () =>
      new Promise((resolve, reject) => {
        const s = connect(path, () => resolve());
        s.once("error", reject);
        sockets.push(s);
      }),
  ),
);
process.send("ready");
