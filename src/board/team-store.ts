import { loadConfig } from "../config/config.js";
import { configFile } from "../state/paths.js";

// Where the team board is, apart from the board itself: an instance that has
// none never loads the PostgreSQL side (issue 26).

/** The config's `store` (a team board's URL), if it names one; an invalid
 * config throws, naming the file and key. */
export function configuredStore(env: NodeJS.ProcessEnv): string | undefined {
  return loadConfig(configFile(undefined, env)).store;
}

/**
 * The team board an instance serves, if any: `url` (`--store`), else the
 * config's `store`. An unreadable config is reported by the instance (which
 * reads it too) and leaves the board in the instance's own file.
 */
export function teamStoreLocation(
  url: string | undefined,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (url !== undefined) return url;
  try {
    return configuredStore(env);
  } catch {
    return undefined;
  }
}
