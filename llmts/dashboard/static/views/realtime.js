// Realtime turns (operation `realtime`): one turn's timeline on its request page, and a connection's
// turns as one continuous timeline (`#/sessions/{id}/connections/{rtc_...}`), client events on the left,
// server events on the right, each turn ending with its outcome.
import { api, poll } from "../api.js";
import { QUERY_PAGE_LIMIT } from "../trace_source.js";
import { appendInSlices, clear, errorText, h, sessionHash } from "../dom.js";
import { shortConnection, turnRows } from "./realtime_events.js";

const PAGE = QUERY_PAGE_LIMIT; // turns per page of the connection view (the control API's largest page)

export function connectionHash(sessionId, connection, query) {
  return sessionHash(sessionId, `connections/${encodeURIComponent(connection)}`, query);
}

export function requestHash(sessionId, requestId) {
  return sessionHash(sessionId, `requests/${encodeURIComponent(requestId)}`);
}

/** A link to a connection's view, showing its short id (the whole id in the title). */
export function connectionLink(sessionId, connection, attrs = {}) {
  return h("a", { href: connectionHash(sessionId, connection), class: "mono", title: connection, ...attrs }, shortConnection(connection));
}

function eventItem(r) {
  const type = r.count > 1 ? `${r.type} ×${r.count}` : r.type;
  return h(
    "li",
    { class: `rt-row ${r.side}${r.kind ? ` ${r.kind}` : ""}`, "data-side": r.side, "data-kind": r.kind || "event", "data-type": r.type },
    h("span", { class: "rt-side" }, r.side),
    h("span", { class: "rt-type" }, type),
    r.text ? h("span", { class: "rt-text" }, r.text) : null,
  );
}

/** The items of one turn: client rows, server rows, the outcome (appended to an `ol.rt-timeline`). */
export function turnItems(entry) {
  const { client, server, outcome } = turnRows(entry);
  const items = [...client, ...server].map(eventItem);
  if (!client.length && !server.length) items.push(h("li", { class: "rt-row note" }, h("span", { class: "muted" }, "no events recorded")));
  items.push(
    h(
      "li",
      { class: `rt-row outcome ${outcome.cls}`, "data-outcome": outcome.label },
      h("span", { class: "rt-side" }, "outcome"),
      h("span", { class: "rt-type" }, outcome.label),
      outcome.detail ? h("span", { class: "rt-text" }, outcome.detail) : null,
    ),
  );
  return items;
}

/** The request page's section for a realtime turn: its timeline and the way to the whole connection. */
export function realtimeSection(ctx, entry) {
  const parts = [h("h2", {}, "Realtime turn")];
  if (entry.realtime_connection) {
    parts.push(
      h(
        "p",
        {},
        "Turn of connection ",
        connectionLink(ctx.session, entry.realtime_connection, { id: "connection-link" }),
        " ",
        h("a", { href: connectionHash(ctx.session, entry.realtime_connection) }, "(all its turns as one timeline)"),
      ),
    );
  }
  if (entry.truncated) parts.push(h("p", { class: "muted" }, "Some events were cut to the journal's preview limit."));
  parts.push(h("ol", { class: "rt-timeline", id: "realtime-timeline" }, turnItems(entry)));
  return h("section", { id: "realtime" }, ...parts);
}

function turnHeader(ctx, entry) {
  const status = entry.status == null ? "in progress" : `status ${entry.status}`;
  return h(
    "li",
    { class: "rt-turn", "data-sequence": String(entry.sequence), "data-request-id": entry.request_id },
    h("a", { href: requestHash(ctx.session, entry.request_id) }, `Turn #${entry.sequence}`),
    h("span", { class: "muted" }, ` ${entry.model || ""} · ${status}${entry.scenario ? ` · ${entry.scenario}` : ""}`),
  );
}

export function mountConnection(root, ctx, connection) {
  const offset = Math.max(0, Number.parseInt(ctx.query.get("offset") || "0", 10) || 0);
  const message = h("p", { class: "error", role: "alert" });
  const about = h("p", { class: "muted", id: "connection-about" });
  const pager = h("div", { class: "pager" });
  const list = h("ol", { class: "rt-timeline connection", id: "connection-timeline" });
  root.append(
    h("p", {}, h("a", { href: sessionHash(ctx.session, "journal") }, "‹ Journal"), " · ", h("a", { href: sessionHash(ctx.session, "journal", { realtime_connection: connection }) }, "its turns in the journal")),
    h("h1", {}, "Connection ", h("span", { class: "mono" }, connection)),
    about,
    message,
    pager,
    list,
  );
  let shown = null; // the turns last rendered (sequence:completed), so a poll that changed nothing renders nothing
  let cancelRender = () => {};

  function showPager(total) {
    clear(pager);
    if (total <= PAGE && offset === 0) return;
    const at = (start) => connectionHash(ctx.session, connection, start ? { offset: String(start) } : undefined);
    if (offset > 0) pager.append(h("a", { href: at(Math.max(0, offset - PAGE)), id: "earlier" }, "‹ Earlier turns"), " ");
    pager.append(h("span", {}, `turns ${offset + 1}–${Math.min(offset + PAGE, total)} of ${total}`));
    if (offset + PAGE < total) pager.append(" ", h("a", { href: at(offset + PAGE), id: "later" }, "Later turns ›"));
  }

  async function load() {
    const { data, headers } = await api.requests(ctx.session, { realtime_connection: connection, order: "asc", offset: String(offset), limit: String(PAGE) });
    message.textContent = "";
    const total = Number(headers.get("X-Total-Count") || data.length);
    // Rebuilt only when a turn arrived or finished (polling must not reset the reader's scroll).
    const state = data.map((entry) => `${entry.sequence}:${entry.completed}`).join(",");
    if (state === shown) return;
    shown = state;
    if (!data.length) {
      about.textContent = "No turns of this connection in the session's journal (they may have been evicted or reset).";
      cancelRender();
      clear(list);
      return;
    }
    const first = data[0];
    about.textContent = `${first.provider} · ${first.path} · ${total} turn${total === 1 ? "" : "s"}`;
    showPager(total);
    cancelRender();
    clear(list);
    cancelRender = appendInSlices(list, data, (entry) => {
      const fragment = document.createDocumentFragment();
      fragment.append(turnHeader(ctx, entry), ...turnItems(entry));
      return fragment;
    });
  }

  const stop = poll(() => load().catch((error) => (message.textContent = errorText(error))), 2000);
  return () => {
    stop();
    cancelRender();
  };
}
