import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

/**
 * A scrolling list that renders only the rows near the viewport, so a
 * timeline of tens of thousands of items costs what a screenful costs.
 * Rows may be of any height: each is measured once rendered (and again when
 * it changes, e.g. a folded tool call is opened) and the offsets below it
 * move; rows never seen count as `estimate` pixels.
 *
 * `follow`: while the view is scrolled to the end, new rows keep it there
 * (a live transcript scrolls by itself); scrolling up stops that, and the
 * caller gets `onFollowChange` to offer "jump to latest".
 */
export interface VirtualListProps<T> {
  items: readonly T[];
  keyOf(item: T): string;
  render(item: T): ComponentChildren;
  estimate?: number;
  overscan?: number;
  label: string;
  follow?: boolean;
  onFollowChange?(following: boolean): void;
  /** Set to a new object to scroll to the end. */
  jump?: object;
  class?: string;
}

const AT_END_PX = 24;

export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, keyOf, estimate = 72, overscan = 600 } = props;
  const box = useRef<HTMLElement>(null);
  const heights = useRef(new Map<string, number>());
  const [version, setVersion] = useState(0);
  const [view, setView] = useState({ top: 0, height: 600 });
  const following = useRef(props.follow ?? false);

  // Offsets of every row: a prefix sum over measured or estimated heights.
  const offsets = useMemo(() => {
    const out = new Float64Array(items.length + 1);
    const h = heights.current;
    for (let i = 0; i < items.length; i++)
      out[i + 1] = out[i]! + (h.get(keyOf(items[i]!)) ?? estimate);
    return out;
    // `version` changes when a measured height changed.
  }, [items, version, estimate, keyOf]);
  const total = offsets[items.length] ?? 0;

  const first = Math.max(0, lowerBound(offsets, view.top - overscan) - 1);
  let last = first;
  while (last < items.length && offsets[last]! < view.top + view.height + overscan) last++;

  const onScroll = useCallback(() => {
    const el = box.current;
    if (el === null) return;
    setView({ top: el.scrollTop, height: el.clientHeight });
    const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - AT_END_PX;
    if (atEnd !== following.current) {
      following.current = atEnd;
      props.onFollowChange?.(atEnd);
    }
  }, [props.onFollowChange]);

  useLayoutEffect(() => {
    const el = box.current;
    if (el !== null) setView({ top: el.scrollTop, height: el.clientHeight });
  }, []);

  // Measure rows: when rendered, and again whenever one changes size by
  // itself (a <details> opened). A changed height re-lays the rows below it.
  const observer = useRef<ResizeObserver | undefined>(undefined);
  useEffect(() => {
    const ro = new ResizeObserver((entries) => {
      let changed = false;
      for (const e of entries) {
        const el = e.target as HTMLElement;
        const key = el.dataset.vkey;
        const h = el.offsetHeight;
        if (key !== undefined && h > 0 && heights.current.get(key) !== h) {
          heights.current.set(key, h);
          changed = true;
        }
      }
      if (changed) setVersion((v) => v + 1);
    });
    observer.current = ro;
    return () => ro.disconnect();
  }, []);
  const observed = useRef(new Set<HTMLElement>());
  useLayoutEffect(() => {
    const el = box.current;
    if (el === null) return;
    let changed = false;
    const now = new Set(el.querySelectorAll<HTMLElement>("[data-vkey]"));
    // Rows scrolled away are let go (the observer would keep them alive).
    for (const old of observed.current) if (!now.has(old)) observer.current?.unobserve(old);
    observed.current = now;
    for (const child of now) {
      observer.current?.observe(child);
      const key = child.dataset.vkey!;
      if (heights.current.has(key)) continue;
      const h = child.offsetHeight;
      if (h > 0) {
        heights.current.set(key, h);
        changed = true;
      }
    }
    if (changed) setVersion((v) => v + 1);
  });

  // Keep to the end while following, after every layout.
  useLayoutEffect(() => {
    const el = box.current;
    if (el !== null && following.current) el.scrollTop = el.scrollHeight;
  });

  useEffect(() => {
    if (props.jump === undefined) return;
    const el = box.current;
    if (el === null) return;
    following.current = true;
    props.onFollowChange?.(true);
    el.scrollTop = el.scrollHeight;
  }, [props.jump]);

  const rows: ComponentChildren[] = [];
  for (let i = first; i < last; i++) {
    const item = items[i]!;
    const key = keyOf(item);
    rows.push(
      <div
        key={key}
        data-vkey={key}
        class="vrow"
        style={{ position: "absolute", left: 0, right: 0, top: `${offsets[i]}px` }}
      >
        {props.render(item)}
      </div>,
    );
  }
  // A scrolling region must be reachable by keyboard to be scrolled (axe:
  // scrollable-region-focusable), hence its tab stop.
  const focusable = { tabIndex: 0 };
  return (
    <section
      ref={box}
      class={props.class}
      aria-label={props.label}
      onScroll={onScroll}
      {...focusable}
    >
      <div style={{ position: "relative", height: `${total}px` }}>{rows}</div>
    </section>
  );
}

/** The first index whose offset is ≥ `value`. */
function lowerBound(offsets: Float64Array, value: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (offsets[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
