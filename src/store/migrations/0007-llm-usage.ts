import type { Migration } from "../migrate.js";

/** Spend an LLM gateway reported (DR-0043): sums per day, session,
 * credential name and model, for `llm_stats_read` and the HUD's cost. An
 * unknown part of the key is the empty string. */
export const m0007LlmUsage: Migration = {
  version: 7,
  name: "llm-usage",
  up(db) {
    db.exec(`
      CREATE TABLE llm_usage (
        day TEXT NOT NULL,
        sid TEXT NOT NULL,
        credential TEXT NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
        usd REAL,
        PRIMARY KEY (day, sid, credential, model)
      ) WITHOUT ROWID;
      CREATE INDEX idx_llm_usage_sid ON llm_usage (sid);
    `);
  },
};
