import type { ComponentChildren, VNode } from "preact";

/**
 * Markdown from a transcript, rendered as Preact nodes — never as HTML: the
 * text only ever becomes text nodes and a fixed set of elements, so nothing
 * a session writes can run or restyle the page. Links keep http(s) and
 * mailto only, and open in a new tab without a referrer.
 *
 * The subset a chat transcript uses: paragraphs, headings, fenced code,
 * block quotes, lists, rules; inline code, bold, italic, links. Scanning is
 * linear (indexOf, no backtracking patterns), and a text past MAX_CHARS is
 * shown as plain preformatted text.
 */
export const MAX_CHARS = 60_000;

export function Markdown({ text }: { text: string }): VNode {
  if (text.length > MAX_CHARS) return <pre class="md-plain">{text}</pre>;
  return <div class="md">{blocks(text)}</div>;
}

function blocks(text: string): ComponentChildren[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: ComponentChildren[] = [];
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length > 0) out.push(<p key={out.length}>{inline(para.join("\n"))}</p>);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const trimmed = line.trimStart();
    if (trimmed.startsWith("```") || trimmed.startsWith("~~~")) {
      flush();
      const fence = trimmed.slice(0, 3);
      const lang = trimmed.slice(3).trim();
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trimStart().startsWith(fence)) body.push(lines[i++]!);
      i++;
      out.push(
        <pre key={out.length} data-lang={lang || undefined}>
          <code>{body.join("\n")}</code>
        </pre>,
      );
      continue;
    }
    if (trimmed === "") {
      flush();
      i++;
      continue;
    }
    const heading = headingLevel(trimmed);
    if (heading > 0) {
      flush();
      const content = inline(trimmed.slice(heading).trim());
      // Transcript headings sit inside the page's own structure: shown as
      // emphasised lines, not as document headings.
      out.push(
        <p key={out.length} class={`md-h md-h${heading}`}>
          <strong>{content}</strong>
        </p>,
      );
      i++;
      continue;
    }
    if (/^(-{3,}|\*{3,}|_{3,})$/.test(trimmed)) {
      flush();
      out.push(<hr key={out.length} />);
      i++;
      continue;
    }
    if (trimmed.startsWith(">")) {
      flush();
      const quoted: string[] = [];
      while (i < lines.length && lines[i]!.trimStart().startsWith(">"))
        quoted.push(lines[i++]!.trimStart().slice(1).replace(/^ /, ""));
      out.push(<blockquote key={out.length}>{blocks(quoted.join("\n"))}</blockquote>);
      continue;
    }
    const bullet = listMarker(trimmed);
    if (bullet !== undefined) {
      flush();
      const ordered = bullet.ordered;
      const items: string[][] = [];
      while (i < lines.length) {
        const l = lines[i]!;
        const m = listMarker(l.trimStart());
        if (m !== undefined && m.ordered === ordered) {
          items.push([l.trimStart().slice(m.width)]);
          i++;
        } else if (items.length > 0 && l.startsWith("  ") && l.trim() !== "") {
          items[items.length - 1]!.push(l.trim());
          i++;
        } else break;
      }
      const children = items.map((it, n) => <li key={n}>{inline(it.join("\n"))}</li>);
      out.push(
        ordered ? <ol key={out.length}>{children}</ol> : <ul key={out.length}>{children}</ul>,
      );
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return out;
}

function headingLevel(line: string): number {
  let n = 0;
  while (n < line.length && n < 7 && line[n] === "#") n++;
  return n >= 1 && n <= 6 && line[n] === " " ? n : 0;
}

function listMarker(line: string): { ordered: boolean; width: number } | undefined {
  const c = line[0];
  if ((c === "-" || c === "*" || c === "+") && line[1] === " ") return { ordered: false, width: 2 };
  let n = 0;
  while (n < line.length && n < 10 && line.charCodeAt(n) >= 48 && line.charCodeAt(n) <= 57) n++;
  if (n > 0 && (line[n] === "." || line[n] === ")") && line[n + 1] === " ")
    return { ordered: true, width: n + 2 };
  return undefined;
}

/** Inline marks, scanned left to right; an unmatched mark is plain text.
 * A closer searched for and not found is not searched for again (`none`), so
 * a text full of unmatched marks still costs one pass per kind of mark. */
function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  let plain = "";
  let i = 0;
  const none = new Set<string>();
  const find = (needle: string, from: number) => {
    if (none.has(needle)) return -1;
    const at = text.indexOf(needle, from);
    if (at < 0) none.add(needle);
    return at;
  };
  const push = (node: ComponentChildren) => {
    if (plain !== "") out.push(plain);
    plain = "";
    out.push(node);
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "`") {
      const end = find("`", i + 1);
      if (end > i + 1) {
        push(<code key={out.length}>{text.slice(i + 1, end)}</code>);
        i = end + 1;
        continue;
      }
    }
    if ((c === "*" || c === "_") && text[i + 1] === c) {
      const end = find(c + c, i + 2);
      if (end > i + 2) {
        push(<strong key={out.length}>{inline(text.slice(i + 2, end))}</strong>);
        i = end + 2;
        continue;
      }
    }
    if ((c === "*" || c === "_") && text[i + 1] !== " " && text[i + 1] !== undefined) {
      const end = find(c, i + 1);
      // `_` inside a word (snake_case) is not emphasis.
      const wordBefore = c === "_" && i > 0 && /\w/.test(text[i - 1]!);
      if (end > i + 1 && text[end - 1] !== " " && !wordBefore) {
        push(<em key={out.length}>{inline(text.slice(i + 1, end))}</em>);
        i = end + 1;
        continue;
      }
    }
    if (c === "[") {
      const close = find("](", i + 1);
      const end = close < 0 ? -1 : find(")", close + 2);
      if (close > i && end > close) {
        const label = text.slice(i + 1, close);
        const url = safeUrl(text.slice(close + 2, end).trim());
        if (url !== undefined && !label.includes("\n")) {
          push(link(url, inline(label), out.length));
          i = end + 1;
          continue;
        }
      }
    }
    if (c === "h" && (text.startsWith("https://", i) || text.startsWith("http://", i))) {
      let end = i;
      while (end < text.length && !/[\s<>"'`]/.test(text[end]!)) end++;
      while (end > i && /[.,;:!?)\]]/.test(text[end - 1]!)) end--;
      const url = safeUrl(text.slice(i, end));
      if (url !== undefined) {
        push(link(url, text.slice(i, end), out.length));
        i = end;
        continue;
      }
    }
    plain += c;
    i++;
  }
  if (plain !== "") out.push(plain);
  return out;
}

function link(url: string, children: ComponentChildren, key: number): VNode {
  return (
    <a key={key} href={url} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

/** Only links a page may follow without running anything. */
export function safeUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === "https:" || url.protocol === "http:" || url.protocol === "mailto:"
      ? url.href
      : undefined;
  } catch {
    return undefined;
  }
}
