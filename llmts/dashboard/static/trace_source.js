// A trace file's data (docs/dashboard.md, "Trace files"): the export the page embeds as JSON in
// <script type="application/json" id="llmts-trace-data">, and the journal query of GET /admin-api/requests
// (llmts/runtime/journal_query.py, llmts/server/api/journal.py) run over its entries, so the views answer
// from it exactly as from the server. Pure functions: api.js turns their results into its answers.

export const TRACE_FORMAT = "llmts-trace/1";
export const TRACE_ELEMENT_ID = "llmts-trace-data";

/** The export this page embeds, or null on the live dashboard. */
export function readTrace() {
  const holder = document.getElementById(TRACE_ELEMENT_ID);
  if (!holder) return null;
  const data = JSON.parse(holder.textContent);
  if (!data || data.format !== TRACE_FORMAT) {
    throw new Error(`this page's trace data is not ${TRACE_FORMAT} (format ${JSON.stringify(data && data.format)})`);
  }
  return data;
}

/** A malformed query: the 400 `invalid_query` of GET /admin-api/requests, with the same details. */
export class QueryError extends Error {
  constructor(details) {
    super("invalid request query");
    this.details = details;
  }
}

// The exact-match filters, as in journal_query.py's _EXACT_FIELDS, with how each value is parsed.
const EXACT = {
  provider: "text",
  model: "text",
  request_id: "text",
  status: "status",
  operation: "text",
  scenario: "text",
  conversation: "text",
  step: "text",
  streaming: "boolean",
  completed: "boolean",
  success: "boolean",
  error_code: "text",
  retry_group: "text",
  forwarded: "boolean",
  mcp_server: "text",
  realtime_connection: "connection",
  a2a_agent: "text",
  tool_name: "text",
};
// The filters on the tool results a request sent back (journal_query.py's _tool_count_ok, _tool_content_ok).
const TOOL_RESULTS = {
  has_tool_results: "boolean",
  tool_result_contains: "query_text",
};
const QUERY_TEXT_CHARS = 1024; // journal.py's QUERY_TEXT_CHARS
const CONNECTION_CHARS = 64; // JournalQuery's realtime_connection
/** The largest page GET /admin-api/requests answers (JournalQuery's limit): the views ask for pages of it. */
export const QUERY_PAGE_LIMIT = 500;
const BOOLEANS = { true: true, false: false }; // the server's own parser (its _BOOLEAN_FIELDS)
// The cursor, the time range and the paging.
const PAGING = ["after", "from", "to", "order", "offset", "limit"];
const INTEGER = /^\s*[+-]?\d+\s*$/;
const ZONED = /(Z|[+-]\d{2}:?\d{2})$/i;

function integer(value, path, details, min, max) {
  if (!INTEGER.test(value)) {
    details.push({ path, message: "Input should be a valid integer" });
    return null;
  }
  const number = Number.parseInt(value, 10);
  if (number < min || (max !== undefined && number > max)) {
    details.push({ path, message: max === undefined ? `Input should be greater than or equal to ${min}` : `Input should be between ${min} and ${max}` });
    return null;
  }
  return number;
}

function parseValue(kind, value, path, details) {
  if (kind === "text") return value;
  if (kind === "status") return integer(value, path, details, 100, 599);
  if (kind === "connection" || kind === "query_text") {
    const most = kind === "connection" ? CONNECTION_CHARS : QUERY_TEXT_CHARS;
    // pydantic counts code points, not UTF-16 units
    if ([...value].length > most) details.push({ path, message: `String should have at most ${most} characters` });
    return value;
  }
  if (!(value in BOOLEANS)) {
    details.push({ path, message: "expected true or false" });
    return null;
  }
  return BOOLEANS[value];
}

function instant(value, path, details) {
  const time = Date.parse(value);
  if (Number.isNaN(time)) details.push({ path, message: "Input should be a valid datetime" });
  else if (!ZONED.test(value.trim())) details.push({ path: "query", message: "Value error, from/to need a time zone (e.g. 2026-01-01T00:00:00Z)" });
  return time;
}

/** The query of GET /admin-api/requests from URL parameters (an object or URLSearchParams). Unknown
 * parameters are ignored; blank, repeated or malformed ones throw QueryError as the server answers 400. */
export function parseJournalQuery(query) {
  const params = new URLSearchParams(query || {});
  const seen = new Map();
  for (const [name, value] of params) seen.set(name, [...(seen.get(name) || []), value]);
  const details = [];
  const parsed = { filters: {}, toolResults: {}, after: null, from: null, to: null, order: "desc", offset: 0, limit: QUERY_PAGE_LIMIT };
  for (const [name, values] of seen) {
    const known = name in EXACT || name in TOOL_RESULTS || PAGING.includes(name);
    if (!known) continue;
    if (values.length !== 1) {
      details.push({ path: name, message: "supplied more than once" });
      continue;
    }
    const value = values[0];
    if (!value.trim()) {
      details.push({ path: name, message: "blank value" });
      continue;
    }
    if (name in EXACT) parsed.filters[name] = parseValue(EXACT[name], value, name, details);
    else if (name in TOOL_RESULTS) parsed.toolResults[name] = parseValue(TOOL_RESULTS[name], value, name, details);
    else if (name === "after") parsed.after = integer(value, name, details, 0);
    else if (name === "offset") parsed.offset = integer(value, name, details, 0);
    else if (name === "limit") parsed.limit = integer(value, name, details, 1, QUERY_PAGE_LIMIT);
    else if (name === "order") {
      if (value === "asc" || value === "desc") parsed.order = value;
      else details.push({ path: name, message: "Input should be 'asc' or 'desc'" });
    } else parsed[name] = instant(value, name, details);
  }
  if (!details.length && parsed.from !== null && parsed.to !== null && parsed.from > parsed.to) {
    details.push({ path: "query", message: "Value error, from must not follow to" });
  }
  if (details.length) throw new QueryError(details);
  return parsed;
}

function matches(entry, query) {
  for (const [name, wanted] of Object.entries(query.filters)) {
    const value = entry[name] === undefined ? null : entry[name];
    // `operation` also takes the operation a request asks an answer of (journal_query.py's _field_ok).
    if (value !== wanted && !(name === "operation" && entry.operation_family === wanted)) return false;
  }
  const results = entry.tool_results || [];
  const { has_tool_results: hasResults, tool_result_contains: needle } = query.toolResults;
  if (hasResults !== undefined && results.length > 0 !== hasResults) return false;
  if (needle !== undefined && !results.some((result) => result.content.includes(needle))) return false;
  if (query.after !== null && entry.sequence <= query.after) return false;
  if (query.from === null && query.to === null) return true;
  const started = Date.parse(entry.started_at);
  if (query.from !== null && started < query.from) return false;
  return !(query.to !== null && started > query.to);
}

/** Filter, order and page the export's entries (ascending by sequence): the page and how many matched. */
export function queryEntries(entries, query) {
  const parsed = parseJournalQuery(query);
  const selected = entries.filter((entry) => matches(entry, parsed));
  if (parsed.order === "desc") selected.reverse();
  return { page: selected.slice(parsed.offset, parsed.offset + parsed.limit), total: selected.length };
}

/** GET /admin-api/sessions's filters (label exact, label_contains case-insensitive, test_outcome). */
export function sessionListed(info, query) {
  const params = new URLSearchParams(query || {});
  const label = info.label ?? null;
  if (params.has("label") && label !== params.get("label")) return false;
  const part = params.get("label_contains");
  if (part && (label === null || !label.toLowerCase().includes(part.toLowerCase()))) return false;
  return !params.has("test_outcome") || (info.test_outcome ?? null) === params.get("test_outcome");
}

function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]));
  }
  return value;
}

/** Whether two JSON values are equal (object keys in any order). */
export function sameJson(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

const USAGE_FIELDS = ["requests", "input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "priced_cost_usd", "unpriced_requests"];

function usageRow() {
  return Object.fromEntries(USAGE_FIELDS.map((name) => [name, 0]));
}

function addUsage(row, entry) {
  row.requests += 1;
  row.input_tokens += entry.usage.input_tokens;
  row.output_tokens += entry.usage.output_tokens;
  row.cached_tokens += entry.usage.cached_tokens;
  row.cache_write_tokens += entry.usage.cache_write_tokens;
  if (entry.cost_usd === null || entry.cost_usd === undefined) row.unpriced_requests += 1;
  else row.priced_cost_usd += entry.cost_usd;
}

function publicUsage(row) {
  const priced = Math.round(row.priced_cost_usd * 1e10) / 1e10;
  return { ...row, total_tokens: row.input_tokens + row.output_tokens, cost_usd: row.unpriced_requests ? null : priced, priced_cost_usd: priced };
}

/** GET /admin-api/usage's answer summed from journal entries (those with usage), per provider and model,
 * per provider and in all; the budget is unknown here (null). */
export function usageFromEntries(entries) {
  const models = new Map();
  const providers = new Map();
  const totals = usageRow();
  for (const entry of entries) {
    if (!entry.usage) continue;
    const key = JSON.stringify([entry.provider, entry.model ?? ""]);
    if (!models.has(key)) models.set(key, { provider: entry.provider, model: entry.model ?? null, row: usageRow() });
    if (!providers.has(entry.provider)) providers.set(entry.provider, usageRow());
    addUsage(models.get(key).row, entry);
    addUsage(providers.get(entry.provider), entry);
    addUsage(totals, entry);
  }
  const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    models: [...models.values()].sort((a, b) => byName(a.provider, b.provider) || byName(a.model ?? "", b.model ?? "")).map((m) => ({ provider: m.provider, model: m.model, ...publicUsage(m.row) })),
    providers: [...providers.entries()].sort((a, b) => byName(a[0], b[0])).map(([provider, row]) => ({ provider, ...publicUsage(row) })),
    totals: publicUsage(totals),
    budget: null,
  };
}
