// What `npm test` proves before the tests run: lint, both type-checks and a
// clean build — run side by side rather than one after another. Each is
// single-threaded and none reads what another writes (the type-checks emit
// nothing, the build writes only dist/), so on a 2-core machine this takes
// about the longest of them instead of their sum. Each one's output is
// printed whole when it ends; any failure fails `npm test`.
import { spawn } from "node:child_process";

const steps = [
  ["lint", ["run", "lint"]],
  ["typecheck", ["run", "typecheck"]],
  ["build", ["run", "build"]],
];

const results = await Promise.all(
  steps.map(
    ([name, args]) =>
      new Promise((resolve) => {
        const child = spawn("npm", ["--silent", ...args], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        child.stdout.on("data", (c) => {
          out += c;
        });
        child.stderr.on("data", (c) => {
          out += c;
        });
        child.on("close", (code) => {
          process.stdout.write(`> ${name}: ${code === 0 ? "ok" : `failed (${code})`}\n${out}`);
          resolve(code === 0);
        });
      }),
  ),
);
if (!results.every(Boolean)) process.exit(1);
