// The transport floor: a trivial Node process relaying A's lines to B over the
// same kind of Unix socket the instance uses. Whatever the instance adds to the
// one-way latency is measured against this.
import { createServer } from "node:net";

const path = process.argv[2];
let b;
createServer((s) => {
  s.once("data", (first) => {
    if (first.toString().startsWith("B")) {
      b = s;
      return;
    }
    b?.write(first);
    s.on("data", (chunk) => b?.write(chunk));
  });
}).listen(path, () => process.send?.("up"));
