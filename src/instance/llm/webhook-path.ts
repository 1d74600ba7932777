/** `…/webhook/<source>` (contract §1.1), matched on the end of the path like
 * `/ws`, so a reverse proxy may add a prefix. Its own module so the listener
 * can tell the route apart without loading the plugin (DR-0022). */
export const WEBHOOK_PATH = /\/webhook\/([^/?#]+)$/;
