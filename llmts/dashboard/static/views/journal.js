// A session's journal: filters as in GET /admin-api/requests, pages of 100 (newest first), and on the
// first page new requests arrive live by polling with the journal's `after` cursor. Each row says what was
// asked and answered (snippets, tool-use markers), how the answer was delivered (the badge) and where it
// sits in its retry group.
import { api, poll, trace } from "../api.js";
import { QUERY_PAGE_LIMIT } from "../trace_source.js";
import { appendInSlices, clear, clock, errorText, h, sessionHash } from "../dom.js";
import { retryAfterText, retryAttempts, shorten, statusBadge, toolMarkers } from "./entry_summary.js";
import { connectionLink } from "./realtime.js";
import { mountUsage } from "./usage.js";

const PAGE = 100;
const FILTERS = [
  ["provider", "Provider", "text"],
  ["model", "Model", "text"],
  ["status", "Status", "number"],
  ["operation", "Operation", "text"],
  ["conversation", "Conversation", "text"],
  ["streaming", "Streaming", "select"],
  ["retry_group", "Retry group", "text"],
  ["mcp_server", "MCP server", "text"],
  ["tool_name", "Tool", "text"],
  ["a2a_agent", "A2A agent", "text"],
  ["realtime_connection", "Connection", "text"],
];
const COLUMNS = ["#", "Started", "Provider / operation", "Model / peer", "Prompt → answer", "Status", "Outcome", "Retry", "Answered by", "ms"];
const CELL_CLASSES = { 0: "num", 3: "target", 4: "exchange", 9: "num" }; // by column index
const RETRY_COLUMN = 7;
const SNIPPET = 70; // characters of a row's prompt and answer (the journal keeps 240; the title shows them)

// MCP and A2A entries sit in the same timeline as the model calls; their "model" is the peer addressed.
// A realtime turn names its model and, linked, its WebSocket connection's short id.
function target(session, entry) {
  if (entry.mcp_server) return entry.tool_name ? `${entry.mcp_server} › ${entry.tool_name}` : entry.mcp_server;
  if (entry.a2a_agent) return entry.a2a_agent;
  if (entry.realtime_connection) return h("span", {}, `${entry.model || ""} › `, connectionLink(session, entry.realtime_connection, { "data-connection": entry.realtime_connection }));
  return entry.model || "";
}

function outcome(entry) {
  if (!entry.completed) return "in progress";
  if (entry.close_code != null) return `closed ${entry.close_code}`; // a WebSocket close frame ended the turn
  if (entry.error_code) return entry.error_code;
  return entry.transport_outcome || (entry.success ? "ok" : "failed");
}

// The latest user text and the chosen answer, one line each, then the tool-use markers.
function exchange(entry) {
  const lines = [];
  if (entry.prompt_text) lines.push(h("div", { class: "snip prompt", title: entry.prompt_text }, h("span", { class: "snip-mark" }, "› "), shorten(entry.prompt_text, SNIPPET)));
  if (entry.answer_text) lines.push(h("div", { class: "snip answer", title: entry.answer_text }, h("span", { class: "snip-mark" }, "‹ "), shorten(entry.answer_text, SNIPPET)));
  const markers = toolMarkers(entry);
  if (markers.length) {
    lines.push(h("div", { class: "markers" }, markers.map((m) => h("span", { class: `marker ${m.kind}`, title: m.title }, m.text))));
  }
  return lines;
}

function outcomeCell(entry) {
  const wait = retryAfterText(entry);
  return [outcome(entry), wait ? h("div", { class: "retry-after" }, wait) : null];
}

// The operation, and how it was answered: a stream, or a WebSocket turn.
function operationLine(entry) {
  const transport = entry.operation === "realtime" ? "websocket" : entry.streaming ? "stream" : "";
  const text = [entry.operation, transport].filter(Boolean).join(" · ");
  return text ? h("div", { class: "muted op" }, text) : null;
}

function duration(entry) {
  if (entry.completed_monotonic_seconds == null) return "";
  return String(Math.round((entry.completed_monotonic_seconds - entry.started_monotonic_seconds) * 1000));
}

function answeredBy(entry) {
  if (entry.step) return `${entry.scenario} › ${entry.step}`;
  if (entry.scenario) return `${entry.scenario}${entry.response_index != null ? ` #${entry.response_index}` : ""}`;
  return "";
}

export function mountJournal(root, ctx) {
  const session = ctx.session;
  const filters = {};
  for (const [name] of FILTERS) {
    const value = ctx.query.get(name);
    if (value) filters[name] = value;
  }
  const offset = Math.max(0, Number.parseInt(ctx.query.get("offset") || "0", 10) || 0);
  const live = offset === 0;
  const rows = new Map(); // sequence -> row
  const shown = new Map(); // sequence -> entry, for the retry attempts among the rows
  let places = new Map(); // request_id -> its attempt in its retry group, among the rows
  const body = h("tbody", { id: "journal-body" });
  const message = h("p", { class: "error", role: "alert" });
  const counts = h("span", { class: "muted", id: "journal-counts" });
  const usage = h("div", { class: "muted usage", id: "usage-summary" });
  const refreshUsage = mountUsage(usage, session);
  // A trace file holds the journal as the test left it: nothing arrives.
  const liveText = trace ? "recorded" : live ? "live" : "paused (not the newest page)";
  const liveBadge = h("span", { class: live && !trace ? "live on" : "live", id: "live-state" }, liveText);
  let cancelRender = () => {};
  let cursor = 0; // every entry up to this sequence is final (unfiltered journal)
  let newest = 0;

  const form = h("form", { class: "filters", id: "journal-filters" });
  for (const [name, label, kind] of FILTERS) {
    let input;
    if (kind === "select") {
      input = h("select", { name, id: `filter-${name}` }, h("option", { value: "" }, "any"), h("option", { value: "true" }, "yes"), h("option", { value: "false" }, "no"));
      input.value = filters[name] || "";
    } else {
      input = h("input", { name, id: `filter-${name}`, type: kind, value: filters[name] || "", placeholder: "any" });
    }
    form.append(h("label", {}, h("span", {}, label), input));
  }
  form.append(h("button", { type: "submit" }, "Apply"), h("button", { type: "reset", class: "link" }, "Clear"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = {};
    for (const [name] of FILTERS) {
      const value = form.elements[name].value.trim();
      if (value) chosen[name] = value;
    }
    ctx.navigate(sessionHash(session, "journal", chosen));
  });
  form.addEventListener("reset", (event) => {
    event.preventDefault();
    ctx.navigate(sessionHash(session, "journal"));
  });

  const pager = h("div", { class: "pager" });
  root.append(
    h("div", { class: "title-row" }, h("h1", {}, "Journal"), liveBadge),
    usage,
    form,
    message,
    h("div", { class: "title-row" }, counts, pager),
    h("table", { class: "grid journal", id: "journal" }, h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", {}, c)))), body),
  );

  // "g1 · attempt 1/2", the group a link to the journal filtered by it.
  function retryCell(entry) {
    const place = places.get(entry.request_id);
    if (!place) return "";
    const href = sessionHash(session, "journal", { retry_group: place.group });
    return h(
      "span",
      { class: "retry", "data-retry-group": place.group },
      h("a", { href, class: "mono", title: `only retry group ${place.group}` }, place.group),
      h("span", { class: "attempt" }, ` attempt ${place.attempt}/${place.of}`), // its own line (CSS)
    );
  }

  function fill(row, entry) {
    const href = sessionHash(session, `requests/${encodeURIComponent(entry.request_id)}`);
    const badge = statusBadge(entry);
    const cells = [
      h("a", { href, class: "mono" }, String(entry.sequence)),
      clock(entry.started_at),
      [entry.provider, operationLine(entry)],
      target(session, entry),
      exchange(entry),
      h("span", { class: `badge ${badge.cls}`, title: badge.title, "data-outcome": entry.transport_outcome || "" }, badge.text),
      outcomeCell(entry),
      retryCell(entry),
      answeredBy(entry),
      duration(entry),
    ];
    row.replaceChildren(...cells.map((cell, i) => h("td", { class: CELL_CLASSES[i] }, cell)));
    row.dataset.requestId = entry.request_id;
    row.dataset.sequence = String(entry.sequence);
    row.classList.toggle("pending", !entry.completed);
  }

  // Attempt numbers depend on every row of the group: recount them, then redraw the retry cells that changed.
  function recountRetries() {
    const before = places;
    places = retryAttempts([...shown.values()]);
    for (const [sequence, row] of rows) {
      const entry = shown.get(sequence);
      if (!entry || !entry.retry_group) continue;
      const was = before.get(entry.request_id);
      const now = places.get(entry.request_id);
      if (was && now && was.attempt === now.attempt && was.of === now.of) continue;
      const cell = row.cells[RETRY_COLUMN];
      if (cell) cell.replaceChildren(retryCell(entry));
    }
  }

  function build(entry) {
    const row = h("tr", {});
    fill(row, entry);
    row.addEventListener("click", (event) => {
      if (event.target.closest("a")) return;
      ctx.navigate(sessionHash(session, `requests/${encodeURIComponent(entry.request_id)}`));
    });
    rows.set(entry.sequence, row);
    return row;
  }

  let matched = 0;
  function showCounts(headers, total = matched) {
    matched = total;
    const observed = headers.get("X-Total-Observed");
    const evicted = headers.get("X-Evicted-Count");
    counts.textContent = `${total} matching; ${observed} observed since the last reset${evicted && evicted !== "0" ? `, ${evicted} evicted` : ""}`;
    return total;
  }

  function showPager(total) {
    clear(pager);
    const first = total === 0 ? 0 : offset + 1;
    const last = Math.min(offset + PAGE, total);
    const at = (start) => sessionHash(session, "journal", { ...filters, ...(start ? { offset: String(start) } : {}) });
    if (offset > 0) pager.append(h("a", { href: at(Math.max(0, offset - PAGE)), id: "newer" }, "‹ Newer"), " ");
    pager.append(h("span", {}, `${first}–${last} of ${total}`));
    if (last < total) pager.append(" ", h("a", { href: at(offset + PAGE), id: "older" }, "Older ›"));
  }

  async function loadPage() {
    // The cursor first (below the oldest request in progress, filtered out or not: it may match once it
    // completes), then the page, which sees at least everything up to it.
    const open = await api.requests(session, { completed: "false", order: "asc", limit: "1" });
    const observed = Number(open.headers.get("X-Total-Observed") || 0);
    const { data, headers } = await api.requests(session, { ...filters, order: "desc", offset: String(offset), limit: String(PAGE) });
    cancelRender();
    rows.clear();
    shown.clear();
    for (const entry of data) shown.set(entry.sequence, entry);
    places = retryAttempts(data);
    clear(body);
    cancelRender = appendInSlices(body, data, build);
    cursor = open.data.length ? open.data[0].sequence - 1 : observed;
    newest = observed;
    showPager(showCounts(headers, Number(headers.get("X-Total-Count") || 0)));
    await refreshUsage();
  }

  // One live tick: where the unfiltered journal is still in progress bounds the cursor, then the filtered
  // entries after it update rows in place or arrive at the top.
  async function tick() {
    const open = await api.requests(session, { completed: "false", order: "asc", limit: "1", ...(cursor ? { after: String(cursor) } : {}) });
    const observed = Number(open.headers.get("X-Total-Observed") || 0);
    if (observed < newest) {
      await loadPage(); // reset with nothing shown yet
      return;
    }
    const firstOpen = open.data.length ? open.data[0].sequence : null;
    const query = { ...filters, order: "asc", limit: String(QUERY_PAGE_LIMIT), ...(cursor ? { after: String(cursor) } : {}) };
    const fresh = await api.requests(session, query);
    // A reset or configure clears the journal and restarts its sequence: the newest row shown is gone.
    // Asked after the fetches above, so a reset before them (followed by more requests than were shown,
    // whose sequences pass the cursor) cannot slip in as new rows; a later reset is the next tick's.
    const top = body.rows[0];
    if (top) {
      const still = await api.requests(session, { request_id: top.dataset.requestId, limit: "1" });
      if (!still.data.length) {
        await loadPage();
        return;
      }
    }
    for (const entry of fresh.data) {
      shown.set(entry.sequence, entry);
      const existing = rows.get(entry.sequence);
      if (existing) {
        fill(existing, entry);
      } else {
        const row = build(entry);
        row.classList.add("fresh");
        // Newest first: before the first row with a lower sequence (a late match lands in its place).
        const after = [...body.rows].find((r) => Number(r.dataset.sequence) < entry.sequence);
        body.insertBefore(row, after || null);
        matched += 1;
      }
    }
    while (body.rows.length > PAGE) {
      const last = body.rows[body.rows.length - 1];
      rows.delete(Number(last.dataset.sequence));
      shown.delete(Number(last.dataset.sequence));
      last.remove();
    }
    if (fresh.data.length) recountRetries();
    newest = observed;
    const next = firstOpen != null ? firstOpen - 1 : observed;
    // A full page means more is waiting past it: advance only as far as what was seen.
    cursor = fresh.data.length === QUERY_PAGE_LIMIT ? Math.min(next, fresh.data[fresh.data.length - 1].sequence) : next;
    showPager(showCounts(open.headers));
    await refreshUsage();
  }

  let stop = () => {};
  loadPage()
    .then(() => {
      if (live) {
        stop = poll(
          () =>
            tick().then(
              () => (message.textContent = ""),
              (error) => (message.textContent = errorText(error)),
            ),
          1000,
        );
      }
    })
    .catch((error) => {
      message.textContent = errorText(error);
    });
  return () => {
    stop();
    cancelRender();
  };
}
