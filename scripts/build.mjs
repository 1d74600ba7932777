// Build: compile src/ to dist/ and copy the data files tsc does not emit
// (the contract's JSON fixtures). Kept as a script so `npm install` (prepare)
// and `npm run build` do exactly the same thing.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");

rmSync(join(root, "dist"), { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  stdio: "inherit",
});
cpSync(join(root, "src", "contract", "fixtures"), join(root, "dist", "contract", "fixtures"), {
  recursive: true,
  filter: (src) => !src.endsWith(".ts"),
});
const bin = join(root, "dist", "cli", "main.js");
if (existsSync(bin)) chmodSync(bin, 0o755);
