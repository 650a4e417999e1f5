// What a journal entry says at a glance, as data (no DOM): its status badge, its prompt and answer
// shortened for a row, its tool-use markers, its advertised retry-after and its place in a retry group.
// The journal's rows and the request page share these, so a list and a page never disagree.

const OUTCOME_WORDS = {
  early_end: "early end",
  aborted: "aborted",
  client_gone: "client gone",
};

/** `text` cut to `max` characters, "…" marking the cut ("" for none). */
export function shorten(text, max) {
  if (text === null || text === undefined) return "";
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * The status badge: {text, cls, title}. Green only for an answer delivered whole: a 200 stream cut short
 * (a transport outcome other than `completed`, or `success` false) says how it ended, amber for a clean
 * early end, red otherwise.
 */
export function statusBadge(entry) {
  if (!entry.completed) {
    return { text: entry.status == null ? "…" : String(entry.status), cls: "pending", title: "in progress" };
  }
  const status = entry.status == null ? "no status" : String(entry.status);
  const outcome = entry.transport_outcome;
  const cutShort = outcome != null && outcome !== "completed";
  if (entry.status != null && entry.status >= 400) {
    const why = cutShort ? ` · ${OUTCOME_WORDS[outcome] || outcome}` : "";
    return { text: `${status}${why}`, cls: "bad", title: entry.error_code || `HTTP ${status}` };
  }
  if (cutShort) {
    const word = OUTCOME_WORDS[outcome] || outcome;
    return {
      text: `${status} · ${word}`,
      cls: outcome === "early_end" ? "warn" : "bad",
      title: `transport outcome ${outcome}${entry.error_code ? `, ${entry.error_code}` : ""}: the client did not get the whole answer`,
    };
  }
  if (entry.success === false) {
    const why = entry.close_code != null ? `closed ${entry.close_code}` : entry.error_code || "failed";
    return { text: `${status} · ${why}`, cls: "bad", title: `not a success: ${why}` };
  }
  return { text: status, cls: "good", title: outcome ? `transport outcome ${outcome}` : "" };
}

/** "retry after 2s" when the answer advertised a Retry-After, else "". */
export function retryAfterText(entry) {
  const seconds = entry.retry_after_seconds;
  if (seconds === null || seconds === undefined) return "";
  return `retry after ${Number(Number(seconds).toFixed(3))}s`;
}

/** The row's tool-use markers: "⚒ name" per call the answer made, "↩ n results" for results sent back. */
export function toolMarkers(entry) {
  const markers = [];
  for (const call of entry.response_tool_calls || []) {
    markers.push({ kind: "call", text: `⚒ ${call.name || "?"}`, title: `the answer calls ${call.name || "?"} (${call.id || "no id"})` });
  }
  const results = (entry.tool_results || []).length;
  if (results) {
    const names = [...new Set((entry.tool_results || []).map((r) => r.name).filter(Boolean))].join(", ");
    markers.push({
      kind: "result",
      text: `↩ ${results} result${results === 1 ? "" : "s"}`,
      title: `the request sends ${results} tool result${results === 1 ? "" : "s"} back${names ? ` (${names})` : ""}`,
    });
  }
  return markers;
}

/**
 * Each entry's place in its retry group among `entries` (those on the page): request_id -> {group, attempt,
 * of}, attempts numbered by sequence.
 */
export function retryAttempts(entries) {
  const groups = new Map();
  for (const entry of entries) {
    if (!entry.retry_group) continue;
    if (!groups.has(entry.retry_group)) groups.set(entry.retry_group, []);
    groups.get(entry.retry_group).push(entry);
  }
  const places = new Map();
  for (const [group, members] of groups) {
    members.sort((a, b) => a.sequence - b.sequence);
    members.forEach((entry, index) => places.set(entry.request_id, { group, attempt: index + 1, of: members.length }));
  }
  return places;
}
