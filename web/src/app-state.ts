import { bearer } from "./conn/bearer.js";
import { Topics } from "./conn/topics.js";
import { probeAuth, Wire } from "./conn/wire.js";

/** The page's one connection and what it holds. A person signed in with a
 * passkey offers their access token as the subprotocol (contract §1.1). */
export const wire = new Wire({
  probeAuth: () => probeAuth(bearer()),
  protocols: () => {
    const token = bearer().authorization?.slice("Bearer ".length);
    return token === undefined ? [] : [`ccmsg.token.${token}`];
  },
});
export const topics = new Topics(wire);
