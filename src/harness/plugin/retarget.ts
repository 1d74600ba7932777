import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomicAsync } from "../../state/atomic-write.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";
import { claudePluginDir, claudeReceiptPath } from "./claude-paths.js";

// The http hooks follow the instance's port (DR-0058): Claude Code takes a
// hook's URL literally, so when the instance binds another port than the one
// the installed hooks.json names (the default one was taken, or an ephemeral
// one was asked), the instance rewrites those URLs itself. Claude Code reads
// a directory marketplace's hooks.json in place at each session start
// (verified with 2.1.328: not its cache copy), so the next session uses the
// new port; sessions already open keep the old one until /reload-plugins.

/**
 * Point the installed plugin's http hooks for `path` at `base` (e.g.
 * `http://127.0.0.1:7078/`), keeping the install's receipt in step so an
 * uninstall still knows the file as its own. Returns whether it changed
 * anything; no plugin installed, or one without http hooks, is left alone.
 */
export async function retargetClaudeHooks(
  stateDir: string,
  base: string,
  path: string,
): Promise<boolean> {
  const file = join(claudePluginDir(stateDir), "hooks", "hooks.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return false;
  }
  const url = new URL(path, base).href;
  const parsed = JSON.parse(text) as { hooks?: Record<string, { hooks?: unknown[] }[]> };
  let changed = false;
  for (const groups of Object.values(parsed.hooks ?? {}))
    for (const group of groups)
      for (const hook of group.hooks ?? []) {
        const h = hook as { type?: unknown; url?: unknown };
        if (h.type !== "http" || typeof h.url !== "string" || h.url === url) continue;
        if (new URL(h.url).pathname !== path) continue;
        h.url = url;
        changed = true;
      }
  if (!changed) return false;
  // Written as the install writes it (plugin/claude.ts), 0600: it holds the token.
  const next = `${JSON.stringify(parsed, null, 2)}\n`;
  await writeFileAtomicAsync(file, next, 0o600);
  await rehash(claudeReceiptPath(stateDir), file, next);
  return true;
}

async function rehash(receiptFile: string, path: string, content: string): Promise<void> {
  let receipt: { files?: { path: string; after?: string }[] };
  try {
    receipt = JSON.parse(await readFile(receiptFile, "utf8"));
  } catch {
    return;
  }
  const entry = receipt.files?.find((f) => f.path === path);
  if (entry === undefined) return;
  entry.after = nodeCrypto().createHash("sha256").update(content).digest("hex");
  await writeFileAtomicAsync(receiptFile, `${JSON.stringify(receipt, null, 2)}\n`);
}
