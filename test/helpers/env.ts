import { isAbsolute } from "node:path";

/** The absolute path an environment variable holds, for a test that builds a
 * path from it. Throws when the variable is unset, empty or relative: a path
 * made from a missing value ("undefined/state/…") would otherwise land in the
 * working tree instead of the test's temp dir. */
export function requiredPath(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (value === undefined || value === "")
    throw new Error(`test setup: ${name} is unset or empty; refusing to build a path from it`);
  if (!isAbsolute(value))
    throw new Error(`test setup: ${name}=${JSON.stringify(value)} is not an absolute path`);
  return value;
}
