import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";

// The http hooks' credential (DR-0058): it opens the instance's hook route
// for this state directory and nothing else — no op, no other route, not the
// owner's. Kept 0600 beside the owner secret; the plugin's hooks.json (0600,
// under the same state directory) carries it as a literal header, since a
// Claude Code http hook can read neither a file nor an environment its
// person did not set.

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const hookTokenPath = (stateDir: string) => join(stateDir, "hook-token");

/** The token, minted on first use. */
export function loadOrMintHookToken(stateDir: string): string {
  const path = hookTokenPath(stateDir);
  try {
    const text = readFileSync(path, "utf8").trim();
    if (TOKEN_PATTERN.test(text)) {
      chmodSync(path, 0o600);
      return text;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const token = randomBytes(32).toString("base64url");
  writeFileAtomic(path, `${token}\n`, 0o600);
  return token;
}

/** The token as minted, or undefined. */
export function readHookToken(stateDir: string): string | undefined {
  try {
    const text = readFileSync(hookTokenPath(stateDir), "utf8").trim();
    return TOKEN_PATTERN.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `offered` is the token, in constant time. */
export function isHookToken(token: string, offered: string | undefined): boolean {
  if (offered === undefined) return false;
  const a = Buffer.from(token);
  const b = Buffer.from(offered);
  return a.length === b.length && timingSafeEqual(a, b);
}
