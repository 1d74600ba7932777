// The transport floors: a trivial Node process on the same kind of Unix socket
// the instance uses. A connection that opens with "B" is the recipient, and
// every other one's bytes are relayed to it untouched (the one-way floor); a
// connection that opens with "E" gets its own bytes back (the round-trip
// floor under send → acknowledgement).
import { createServer } from "node:net";

const path = process.argv[2];
let b;
createServer((s) => {
  s.once("data", (first) => {
    const text = first.toString();
    if (text.startsWith("B")) {
      b = s;
      return;
    }
    if (text.startsWith("E")) {
      s.on("data", (chunk) => s.write(chunk));
      return;
    }
    b?.write(first);
    s.on("data", (chunk) => b?.write(chunk));
  });
}).listen(path, () => process.send?.("up"));
