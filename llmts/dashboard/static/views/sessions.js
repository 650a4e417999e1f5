// Sessions: every session by its label (a test's node id when the pytest plugin made it) with its test
// outcome and counters, searchable by label or id and filterable to failed tests (both kept in the
// address); reset and delete ask for confirmation inline.
import { api, poll, trace } from "../api.js";
import { bytes, clear, errorText, h, sessionHash, when } from "../dom.js";

const COLUMNS = ["Session", "Created", "Configured", "Scenarios", "Graphs", "Requests", "Journal entries", "Journal size", ""];
const FAILED = new Set(["failed", "error"]);
const OUTCOME_CLASSES = { passed: "good", failed: "bad", error: "bad", skipped: "warn" };

/** Whether a session passes the search (a label or id substring, any case) and the failed-tests filter. */
function matches(info, search, failedOnly) {
  if (failedOnly && !FAILED.has(info.test_outcome)) return false;
  if (!search) return true;
  const needle = search.toLowerCase();
  return info.id.toLowerCase().includes(needle) || (info.label || "").toLowerCase().includes(needle);
}

/** The view's address with its search and filter, without a route change (typing keeps its focus). */
function keepInAddress(search, failedOnly) {
  const query = new URLSearchParams();
  if (search) query.set("q", search);
  if (failedOnly) query.set("failed", "1");
  const text = query.toString();
  try {
    history.replaceState(history.state, "", `#/${text ? `?${text}` : ""}`);
  } catch {
    // A page that may not rewrite its address (a saved file in some browsers) just does not keep it.
  }
}

export function mountSessions(root, ctx) {
  const body = h("tbody", { id: "sessions-body" });
  const message = h("p", { class: "error", role: "alert" });
  const summary = h("p", { class: "muted", id: "sessions-summary" });
  const create = h("button", { type: "button", id: "new-session" }, "New session");
  const rows = new Map(); // id -> {row, cells, actions, confirming, info}
  const search = h("input", {
    type: "search",
    id: "session-search",
    name: "q",
    placeholder: "label or id",
    value: ctx.query.get("q") || "",
    autocomplete: "off",
    "aria-label": "Search sessions by label or id",
  });
  const failedOnly = h("input", { type: "checkbox", id: "failed-only", name: "failed" });
  failedOnly.checked = ctx.query.get("failed") === "1";
  const empty = h("p", { class: "muted", id: "sessions-empty", hidden: true }, "No session matches.");
  let latest = [];
  let refreshedAt = "";

  create.addEventListener("click", async () => {
    try {
      const { data } = await api.createSession();
      ctx.navigate(sessionHash(data.id, "journal"));
    } catch (error) {
      message.textContent = errorText(error);
    }
  });

  const form = h(
    "form",
    { class: "filters sessions-filters", id: "session-filters", role: "search" },
    h("label", { for: "session-search" }, h("span", {}, "Search"), search),
    h("label", { class: "check", for: "failed-only" }, failedOnly, h("span", {}, "Failed tests only")),
  );
  form.addEventListener("submit", (event) => event.preventDefault());
  const applyFilters = () => {
    keepInAddress(search.value.trim(), failedOnly.checked);
    show();
  };
  search.addEventListener("input", applyFilters);
  failedOnly.addEventListener("change", applyFilters);

  root.append(
    h("div", { class: "title-row" }, h("h1", {}, "Sessions"), trace ? null : create),
    form,
    summary,
    message,
    h("table", { class: "grid", id: "sessions" }, h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", {}, c)))), body),
    empty,
  );

  function actions(info, entry) {
    const cell = clear(entry.actions);
    if (entry.confirming) {
      const verb = entry.confirming;
      const yes = h("button", { type: "button", class: "danger", "data-confirm": verb }, `Yes, ${verb}`);
      const no = h("button", { type: "button", class: "link" }, "Cancel");
      yes.addEventListener("click", async () => {
        entry.confirming = null;
        actions(info, entry);
        try {
          if (verb === "delete") await api.deleteSession(info.id);
          else await api.reset(info.id);
          message.textContent = "";
        } catch (error) {
          message.textContent = errorText(error);
        }
        refresh();
      });
      no.addEventListener("click", () => {
        entry.confirming = null;
        actions(info, entry);
      });
      cell.append(h("span", { class: "confirm" }, `${verb[0].toUpperCase()}${verb.slice(1)} ${info.id}?`), " ", yes, " ", no);
      return;
    }
    const ask = (verb) => () => {
      entry.confirming = verb;
      actions(info, entry);
    };
    if (trace) return; // a trace file is read-only: nothing to reset or delete
    cell.append(h("button", { type: "button", "data-action": "reset", onclick: ask("reset") }, "Reset"));
    if (info.id !== "default") {
      cell.append(" ", h("button", { type: "button", "data-action": "delete", class: "danger", onclick: ask("delete") }, "Delete"));
    }
  }

  function upsert(info) {
    let entry = rows.get(info.id);
    if (!entry) {
      const cells = COLUMNS.slice(0, -1).map(() => h("td"));
      entry = { cells, actions: h("td", { class: "actions" }), confirming: null, row: null };
      entry.row = h("tr", { "data-session": info.id }, cells, entry.actions);
      rows.set(info.id, entry);
      actions(info, entry);
    }
    entry.info = info;
    const [idCell, created, configured, scenarios, graphs, requests, entries, size] = entry.cells;
    const href = sessionHash(info.id, "journal");
    const outcome = info.test_outcome
      ? h("span", { class: `badge outcome ${OUTCOME_CLASSES[info.test_outcome] || ""}`, "data-outcome": info.test_outcome }, info.test_outcome)
      : null;
    clear(idCell).append(
      ...[
        info.label ? h("a", { href, class: "session-label", title: info.label }, info.label) : null,
        h("div", { class: "session-id" }, h("a", { href, class: "mono" }, info.id), outcome ? " " : null, outcome),
      ].filter(Boolean),
    );
    entry.row.dataset.outcome = info.test_outcome || "";
    created.textContent = when(info.created_at);
    configured.textContent = info.configured ? "yes" : "no";
    scenarios.textContent = String(info.scenario_count ?? "");
    graphs.textContent = String(info.conversation_count ?? "");
    requests.textContent = String(info.request_count ?? "");
    entries.textContent = `${info.journal_entries ?? ""}${info.evicted_count ? ` (${info.evicted_count} evicted)` : ""}`;
    size.textContent = bytes(info.journal_bytes || 0);
    for (const cell of [scenarios, graphs, requests, entries, size]) cell.className = "num";
    return entry.row;
  }

  async function refresh() {
    const { data } = await api.sessions();
    const seen = new Set();
    // The default session first, then the newest first.
    const ordered = [...data].sort((a, b) =>
      a.id === "default" ? -1 : b.id === "default" ? 1 : String(b.created_at).localeCompare(String(a.created_at)),
    );
    ordered.forEach((info, index) => {
      seen.add(info.id);
      const row = upsert(info);
      if (body.children[index] !== row) body.insertBefore(row, body.children[index] || null);
    });
    for (const [id, entry] of rows) {
      if (!seen.has(id)) {
        entry.row.remove();
        rows.delete(id);
      }
    }
    latest = data;
    refreshedAt = new Date().toLocaleTimeString();
    show();
  }

  // Hides the rows the search and the filter leave out (they stay in the table, updated by the poll).
  function show() {
    const needle = search.value.trim();
    let visible = 0;
    for (const entry of rows.values()) {
      const keep = matches(entry.info, needle, failedOnly.checked);
      entry.row.hidden = !keep;
      if (keep) visible += 1;
    }
    empty.hidden = visible > 0 || latest.length === 0;
    const failed = latest.filter((info) => FAILED.has(info.test_outcome)).length;
    const shown = visible === latest.length ? "" : `${visible} shown; `;
    summary.textContent =
      `${shown}${latest.length} session${latest.length === 1 ? "" : "s"} on this server` +
      `${failed ? `, ${failed} failed test${failed === 1 ? "" : "s"}` : ""}; refreshed ${refreshedAt}`;
  }

  return poll(() => refresh().catch((error) => (summary.textContent = errorText(error))), 2000);
}
