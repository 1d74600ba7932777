import { type Static, Type } from "@sinclair/typebox";
import { TOPIC_DESCRIPTION, TOPIC_PATTERN } from "./topic-kinds.js";

// The topic-name schema over topic-kinds.ts (contract §5.2).
export * from "./topic-kinds.js";

export const Topic = Type.String({
  pattern: TOPIC_PATTERN,
  description: TOPIC_DESCRIPTION,
});
export type Topic = Static<typeof Topic>;
