import { createServer } from "node:net";

// A port a test must name before its listener starts (a mesh list, a
// PostgreSQL cluster). Asking the kernel for one (listen on 0, then close)
// raced the suite's other listeners: the kernel hands the same freed port to
// the next `listen(0)`, and an instance of another file took it first. So the
// port comes from below Linux's ephemeral range (32768–60999), which port 0
// and outgoing connections never use: only another caller of this could take
// it, and a bind proves it is free now.

const LOW = 20_000;
const HIGH = 32_767;

/** A loopback port free right now, outside the ephemeral range. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await bindable(port)) return port;
  }
}

/** `n` distinct such ports. */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
