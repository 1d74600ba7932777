/** The http hooks' route (DR-0058), its own module so the gate can tell it
 * apart without loading it. Claude Code's event is in the body. */
export const HOOK_PATH = "/hooks/claude";
