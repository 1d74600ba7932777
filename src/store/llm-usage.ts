import type { Db } from "./database.js";

/** One request's spend, as added to the day's sums. */
export interface UsageAdd {
  day: string;
  sid: string;
  credential: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Absent when the model has no price: the sum stays unknown, not zero. */
  usd: number | undefined;
}

/** Sums of tokens and spend. */
export interface UsageSums {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** null while no priced request was added. */
  usd: number | null;
}

export interface UsageDayRow extends UsageSums {
  day: string;
  credential: string;
  model: string;
}

/** The llm_usage table (migration 0006): sums per (day, sid, credential,
 * model), added to as requests end. */
export class LlmUsageStore {
  private readonly add_;
  private readonly ofSid_;
  private readonly since_;

  constructor(db: Db) {
    this.add_ = db.prepare(
      `INSERT INTO llm_usage (day, sid, credential, model, requests, input_tokens, output_tokens,
         cache_creation_input_tokens, cache_read_input_tokens, usd)
       VALUES (@day, @sid, @credential, @model, 1, @input_tokens, @output_tokens,
         @cache_creation_input_tokens, @cache_read_input_tokens, @usd)
       ON CONFLICT (day, sid, credential, model) DO UPDATE SET
         requests = requests + 1,
         input_tokens = input_tokens + excluded.input_tokens,
         output_tokens = output_tokens + excluded.output_tokens,
         cache_creation_input_tokens = cache_creation_input_tokens + excluded.cache_creation_input_tokens,
         cache_read_input_tokens = cache_read_input_tokens + excluded.cache_read_input_tokens,
         usd = CASE WHEN excluded.usd IS NULL THEN usd ELSE coalesce(usd, 0) + excluded.usd END`,
    );
    this.ofSid_ = db.prepare(
      `SELECT coalesce(sum(requests), 0) AS requests, coalesce(sum(input_tokens), 0) AS input_tokens,
         coalesce(sum(output_tokens), 0) AS output_tokens,
         coalesce(sum(cache_creation_input_tokens), 0) AS cache_creation_input_tokens,
         coalesce(sum(cache_read_input_tokens), 0) AS cache_read_input_tokens, sum(usd) AS usd
       FROM llm_usage WHERE sid = ?`,
    );
    this.since_ = db.prepare(
      `SELECT day, credential, model, sum(requests) AS requests, sum(input_tokens) AS input_tokens,
         sum(output_tokens) AS output_tokens,
         sum(cache_creation_input_tokens) AS cache_creation_input_tokens,
         sum(cache_read_input_tokens) AS cache_read_input_tokens, sum(usd) AS usd
       FROM llm_usage WHERE day >= ? GROUP BY day, credential, model ORDER BY day`,
    );
  }

  add(row: UsageAdd): void {
    this.add_.run({ ...row, usd: row.usd ?? null });
  }

  /** Everything one session spent. */
  ofSession(sid: string): UsageSums {
    return this.ofSid_.get(sid) as UsageSums;
  }

  /** Sums per day, credential and model from `day` (YYYY-MM-DD) on. */
  since(day: string): UsageDayRow[] {
    return this.since_.all(day) as UsageDayRow[];
  }
}
