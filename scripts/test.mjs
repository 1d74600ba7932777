// `npm test`: lint, both type-checks and a clean build, then the tests — with
// nothing waiting that need not. Lint, the type-checks and the build run side
// by side (each single-threaded; none reads what another writes: the
// type-checks emit nothing, the build writes only dist/). The tests need only
// the build (integration tests run dist/), so vitest starts the moment it is
// done, while lint and the type-checks finish beside it. Each step's output is
// printed whole when it ends; any failure fails `npm test`. Arguments go to
// vitest (`npm test -- test/unit`). The type-checks are incremental (their
// state in node_modules/.cache/ccmsg/, errors reported again every run): after
// a small change they take ~10 CPU-s instead of ~33, CPU the build and the
// first tests need on 2 cores.
import { spawn } from "node:child_process";

/** Run `cmd args`, its output gathered (or passed through): resolves ok. */
function step(name, cmd, args, { gather = true } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      stdio: ["ignore", gather ? "pipe" : "inherit", gather ? "pipe" : "inherit"],
    });
    let out = "";
    if (gather) {
      child.stdout.on("data", (c) => {
        out += c;
      });
      child.stderr.on("data", (c) => {
        out += c;
      });
    }
    child.on("close", (code) => {
      process.stdout.write(`> ${name}: ${code === 0 ? "ok" : `failed (${code})`}\n${out}`);
      resolve(code === 0);
    });
  });
}

const npm = (name) => step(name, "npm", ["--silent", "run", name]);
const checks = Promise.all([npm("lint"), npm("typecheck")]);
const built = await npm("build");
const tested = built
  ? step("vitest", "vitest", ["run", ...process.argv.slice(2)], { gather: false })
  : Promise.resolve(false);
const results = [built, await tested, ...(await checks)];
if (!results.every(Boolean)) process.exit(1);
