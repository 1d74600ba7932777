import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";
import { isPostgresUrl, redactUrl } from "../../src/store/pg/url.js";

describe("the config's store key (DR-0046)", () => {
  it("takes a PostgreSQL URL", () => {
    expect(checkConfig({ store: "postgres://u:p@db/board" }, "c.json").store).toBe(
      "postgres://u:p@db/board",
    );
    expect(checkConfig({ store: "postgresql://db/board" }, "c.json").store).toBe(
      "postgresql://db/board",
    );
  });

  it("refuses anything else, naming the key", () => {
    for (const store of ["/tmp/board.db", "", 5, "mysql://db/x"])
      expect(() => checkConfig({ store }, "c.json")).toThrow(
        /config c\.json: store: must be a postgres/,
      );
  });

  it("never shows a password", () => {
    expect(redactUrl("postgres://alice:s3cret@db:5432/board?sslmode=require")).toBe(
      "postgres://alice:***@db:5432/board?sslmode=require",
    );
    expect(redactUrl("postgres://db/board")).toBe("postgres://db/board");
    expect(isPostgresUrl("POSTGRES://db/x")).toBe(true);
    expect(isPostgresUrl("board.db")).toBe(false);
  });
});
