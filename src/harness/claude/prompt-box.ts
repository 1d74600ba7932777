// Claude Code's input box as a terminal shows it (2.1.328, verified in tmux;
// DR-0055): a line starting `❯` between two full-width rules (`─`), with the
// mode line below. Text a person has typed and not sent stands after the
// `❯`; a dialog (a permission prompt, a menu) replaces the box, so no box is
// found. Read from `tmux capture-pane -p`, without colours: a dimmed
// placeholder reads as text, which only ever keeps ccmsg from typing.

/** What the screen shows of the input box. */
export type PromptBox = "empty" | "holds-text" | "absent";

/** A full-width rule of the box: box-drawing `─` only, at least this long. */
const RULE = /^─{20,}$/;
const PROMPT = "❯";

/** The input box of the last screen in `screen`. */
export function promptBox(screen: string): PromptBox {
  const lines = screen.split("\n").map((l) => l.trimEnd());
  const rules: number[] = [];
  lines.forEach((l, i) => {
    if (RULE.test(l.trim())) rules.push(i);
  });
  if (rules.length < 2) return "absent";
  const top = rules[rules.length - 2]!;
  const bottom = rules[rules.length - 1]!;
  const inside = lines.slice(top + 1, bottom);
  if (inside.length === 0 || !inside[0]!.startsWith(PROMPT)) return "absent";
  const first = inside[0]!.slice(PROMPT.length);
  return inside.length === 1 && first.trim() === "" ? "empty" : "holds-text";
}

/**
 * Whether `text` can be typed as one prompt and arrive as itself: one line of
 * printable characters, not starting with what the box reads as a command
 * (`/` commands, `!` shell, `#` memory, `&` background) and not ending in an
 * `@` mention (Enter would take the completion instead of sending). Anything
 * else goes as a message.
 */
export function typeable(text: string, maxChars: number): boolean {
  if (text.trim() === "" || text.length > maxChars) return false;
  // Control characters (newline, tab, escape) would act as keys.
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code < 0x20 || code === 0x7f || (code >= 0x80 && code < 0xa0)) return false;
  }
  const start = text.trimStart()[0]!;
  if ("/!#&".includes(start)) return false;
  const last = text.trim().split(/\s+/).at(-1)!;
  return !last.startsWith("@");
}
