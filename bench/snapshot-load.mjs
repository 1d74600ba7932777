// Load for the health benchmark: four clients polling /api/snapshot (or the
// path given third) back to back from a process of their own, as dashboards in
// other tabs or on other machines would, until told to stop.
const base = process.argv[2];
const headers = { authorization: process.argv[3] };
const path = process.argv[4] ?? "api/snapshot";
let running = true;
process.on("message", (m) => {
  if (m === "stop") running = false;
});
const loop = async () => {
  while (running) await (await fetch(`${base}${path}`, { headers })).arrayBuffer();
};
process.send("started");
await Promise.all([loop(), loop(), loop(), loop()]);
process.exit(0);
