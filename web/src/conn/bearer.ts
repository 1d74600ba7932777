import { person } from "./person.js";

/** The person's access token as request headers; none for the owner (whose
 * cookie goes by itself). */
export function bearer(): { authorization?: string } {
  const held = person.peek();
  return held === undefined ? {} : { authorization: `Bearer ${held.access.value}` };
}
