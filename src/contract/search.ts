// What search across sessions answers (DR-0037): `ccmsg search`, the
// console's `GET /api/search`. Not a wire op; the console and the CLI read
// these shapes, the store produces them.

/** One result. */
export interface SearchHit {
  sid: string;
  agent_id?: string;
  /** The transcript item's id (`<uuid>:<index>`). */
  item?: string;
  /** A message's mid. */
  mid?: string;
  /** A message's sender (a sid or `user`). */
  from?: string;
  type: string;
  at: number;
  /** The text around the match; `highlights` are [start, end) offsets of the
   * matched words in it (UTF-16 code units). */
  snippet: string;
  highlights: [number, number][];
  /** BM25 relevance: higher is better. */
  rank: number;
}

export interface SearchAnswer {
  hits: SearchHit[];
  /** More matched than were returned. */
  more: boolean;
  /** The index has not read every source yet (a new index, or a backlog
   * after a restart): what it answers may be incomplete. */
  indexing: boolean;
}
