// Store locations, kept apart from the client so that reading the config
// loads no database code.

/** Whether a store location names a PostgreSQL database rather than a file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** The URL without its password, for messages and health answers (a
 * secret is never logged). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== "") u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparseable URL)";
  }
}
