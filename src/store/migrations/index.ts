import type { Migration } from "../migrate.js";
import { m0001Instance } from "./0001-instance.js";

/** Every schema step, in version order. */
export const MIGRATIONS: readonly Migration[] = [m0001Instance];
