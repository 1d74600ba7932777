import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FIXTURE_IDS } from "../../src/contract/fixtures/index.js";
import {
  type DirectDelivery,
  directDeliveryReplyLine,
  parseDirectDelivery,
  renderDirectDelivery,
} from "../../src/contract/index.js";

const MID = `${FIXTURE_IDS.instance}/1`;
const A = FIXTURE_IDS.sidA;

describe("direct delivery wording", () => {
  it("renders the exact wording: attribute order, body untouched, reply line last", () => {
    const text = renderDirectDelivery({
      mid: MID,
      from: A,
      from_label: "widgets/board",
      text: "hi",
    });
    expect(text).toBe(
      `<cross-session-message from="ccmsg" from-name="widgets/board" from-mode="prompting" ccmsg-mid="${MID}" ccmsg-from="${A}">\n` +
        "hi\n\n" +
        `Reply with: ccmsg reply ${MID} --to ${A} <text>\n` +
        "</cross-session-message>",
    );
  });

  it("writes ccmsg-reply-to only when the message answers another", () => {
    const without = renderDirectDelivery({ mid: MID, from: A, from_label: "x", text: "t" });
    expect(without).not.toContain("ccmsg-reply-to");
    const withReply = renderDirectDelivery({
      mid: MID,
      from: A,
      from_label: "x",
      text: "t",
      reply_to: `${FIXTURE_IDS.instance}/0`,
    });
    expect(withReply.split("\n")[0]).toMatch(
      / ccmsg-from="[^"]+" ccmsg-reply-to="[0-9a-f]{32}\/0">$/,
    );
  });

  it("escapes attribute values (& first) but never the body", () => {
    const rendered = renderDirectDelivery({
      mid: MID,
      from: A,
      from_label: `a&b <c> "d" &amp;`,
      text: `<b>&amp; "quoted"</b>`,
    });
    expect(rendered).toContain(`from-name="a&amp;b &lt;c&gt; &quot;d&quot; &amp;amp;"`);
    expect(rendered).toContain(`\n<b>&amp; "quoted"</b>\n`);
  });

  it("gives a person's message a reply line without --to", () => {
    expect(directDeliveryReplyLine(MID, "user")).toBe(`Reply with: ccmsg reply ${MID} <text>`);
    expect(directDeliveryReplyLine(MID, A)).toBe(`Reply with: ccmsg reply ${MID} --to ${A} <text>`);
    const rendered = renderDirectDelivery({
      mid: MID,
      from: "user",
      from_label: "user",
      text: "x",
    });
    expect(rendered).toContain(`ccmsg-from="user"`);
    expect(rendered).not.toContain("--to");
  });

  it("always names ccmsg as from, never a sid or a uds: path", () => {
    const rendered = renderDirectDelivery({ mid: MID, from: A, from_label: "x", text: "x" });
    expect(rendered.startsWith(`<cross-session-message from="ccmsg" `)).toBe(true);
  });
});

describe("parsing a delivery", () => {
  const base: DirectDelivery = { mid: MID, from: A, from_label: "widgets/board", text: "hi" };

  it("finds the closing tag from the end, so a body holding it round-trips", () => {
    const d = { ...base, text: "look:\n</cross-session-message>\nand more" };
    expect(parseDirectDelivery(renderDirectDelivery(d))).toEqual(d);
  });

  it("strips the reply line only when it is exactly this delivery's", () => {
    const otherLine = `${base.text}\n\nReply with: ccmsg reply ${FIXTURE_IDS.instance}/99 --to ${A} <text>`;
    const rendered = renderDirectDelivery(base).replace(
      `\n\nReply with: ccmsg reply ${MID} --to ${A} <text>`,
      otherLine.slice(base.text.length),
    );
    expect(parseDirectDelivery(rendered)?.text).toBe(otherLine);
  });

  it("tolerates a trailing newline after the closing tag", () => {
    expect(parseDirectDelivery(`${renderDirectDelivery(base)}\n`)).toEqual(base);
  });

  it("refuses text that is not an envelope", () => {
    const good = renderDirectDelivery(base);
    const cases = [
      "hello",
      good.replace("<cross-session-message", "<other-message"),
      good.replace(` ccmsg-mid="${MID}"`, ""),
      good.replace(` ccmsg-from="${A}"`, ""),
      good.replace(` from-name="widgets/board"`, ""),
      good.replace(">\nhi", ">hi"),
      good.replace("</cross-session-message>", "</cross-session>"),
      `${good}\ntrailing words`,
      good.replace(`from="ccmsg"`, "from=ccmsg"),
    ];
    for (const c of cases) expect(parseDirectDelivery(c), c).toBeUndefined();
  });

  it("reads attributes regardless of order and unescapes &amp; last", () => {
    const text = `<cross-session-message ccmsg-from="user" ccmsg-mid="${MID}" from-name="&amp;lt;x&amp;gt;">\nbody\n</cross-session-message>`;
    expect(parseDirectDelivery(text)).toEqual({
      mid: MID,
      from: "user",
      from_label: "&lt;x&gt;",
      text: "body",
    });
  });
});

describe("render → parse round-trips (property)", () => {
  const hex = fc.stringMatching(/^[0-9a-f]{32}$/);
  const mid = fc.tuple(hex, fc.nat()).map(([i, n]) => `${i}/${n}`);
  const sender = fc.oneof(
    fc.uuid({ version: 4 }).map((u) => u.toLowerCase()),
    fc.constant("user"),
  );
  // Text rich in the characters that matter: tags, quotes, entities, newlines.
  const tricky = fc.oneof(
    fc.string({ unit: "grapheme" }),
    fc
      .array(
        fc.constantFrom(
          "</cross-session-message>",
          "<cross-session-message>",
          "\n",
          "\n\n",
          '"',
          "&",
          "&amp;",
          "&quot;",
          "<",
          ">",
          "Reply with: ccmsg reply ",
          "x",
          " ",
        ),
      )
      .map((parts) => parts.join("")),
  );

  it("any text and label survive the round trip", () => {
    fc.assert(
      fc.property(
        mid,
        sender,
        tricky,
        tricky,
        fc.option(mid, { nil: undefined }),
        (m, from, label, text, replyTo) => {
          const d: DirectDelivery = { mid: m, from, from_label: label, text };
          if (replyTo !== undefined) d.reply_to = replyTo;
          expect(parseDirectDelivery(renderDirectDelivery(d))).toEqual(d);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("a text that ends with its own reply line still round-trips", () => {
    fc.assert(
      fc.property(mid, sender, (m, from) => {
        const d: DirectDelivery = {
          mid: m,
          from,
          from_label: "l",
          text: `x\n\n${directDeliveryReplyLine(m, from)}`,
        };
        expect(parseDirectDelivery(renderDirectDelivery(d))).toEqual(d);
      }),
    );
  });
});
