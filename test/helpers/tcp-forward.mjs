// A reverse-proxy stand-in: `node tcp-forward.mjs <listen host:port>
// <target host:port>` forwards every TCP connection to the target, prints
// `listening` once bound, and exits when its stdin closes (its test is gone).
import net from "node:net";

const split = (hostPort) => {
  const colon = hostPort.lastIndexOf(":");
  return [hostPort.slice(0, colon), Number(hostPort.slice(colon + 1))];
};
const [listenHost, listenPort] = split(process.argv[2]);
const [targetHost, targetPort] = split(process.argv[3]);

const server = net.createServer((inbound) => {
  const outbound = net.connect(targetPort, targetHost);
  inbound.pipe(outbound).pipe(inbound);
  // Either side's error or close ends both, as a proxy would.
  for (const s of [inbound, outbound]) {
    s.on("error", () => {});
    s.on("close", () => {
      inbound.destroy();
      outbound.destroy();
    });
  }
});
server.listen(listenPort, listenHost, () => process.stdout.write("listening\n"));
process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
