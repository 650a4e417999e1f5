// Sessions: every session with its counters; reset and delete ask for confirmation inline.
import { api, poll } from "../api.js";
import { bytes, clear, errorText, h, sessionHash, when } from "../dom.js";

const COLUMNS = ["Session", "Created", "Configured", "Scenarios", "Graphs", "Requests", "Journal entries", "Journal size", ""];

export function mountSessions(root, ctx) {
  const body = h("tbody", { id: "sessions-body" });
  const message = h("p", { class: "error", role: "alert" });
  const summary = h("p", { class: "muted", id: "sessions-summary" });
  const create = h("button", { type: "button", id: "new-session" }, "New session");
  const rows = new Map(); // id -> {row, cells, actions, confirming}

  create.addEventListener("click", async () => {
    try {
      const { data } = await api.createSession();
      ctx.navigate(sessionHash(data.id, "journal"));
    } catch (error) {
      message.textContent = errorText(error);
    }
  });

  root.append(
    h("div", { class: "title-row" }, h("h1", {}, "Sessions"), create),
    summary,
    message,
    h("table", { class: "grid", id: "sessions" }, h("thead", {}, h("tr", {}, COLUMNS.map((c) => h("th", {}, c)))), body),
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
    const [idCell, created, configured, scenarios, graphs, requests, entries, size] = entry.cells;
    clear(idCell).append(h("a", { href: sessionHash(info.id, "journal"), class: "mono" }, info.id));
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
    summary.textContent = `${data.length} session${data.length === 1 ? "" : "s"} on this server; refreshed ${new Date().toLocaleTimeString()}`;
  }

  return poll(() => refresh().catch((error) => (summary.textContent = errorText(error))), 2000);
}
