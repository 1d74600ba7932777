import { Topics } from "./conn/topics.js";
import { probeAuth, Wire } from "./conn/wire.js";

/** The page's one connection and what it holds. */
export const wire = new Wire({ probeAuth });
export const topics = new Topics(wire);
