// One request: a streamed answer's text as the client received it, what was sent and answered
// (pretty-printed previews, a stream's frames folded), its tool calls and results, and its delivery as a
// timeline (plan, frames emitted, terminal marker, transport outcome, retry group).
import { api, poll } from "../api.js";
import { clear, errorText, h, pretty, sessionHash, when } from "../dom.js";
import { splitFrames } from "./assemble.js";
import { assembledSection, assembleEntry } from "./assembled.js";
import { retryAfterText, statusBadge } from "./entry_summary.js";
import { connectionLink, realtimeSection } from "./realtime.js";
import { previewFrames } from "./realtime_events.js";

function ms(seconds, start) {
  return seconds == null ? null : Math.round((seconds - start) * 1000);
}

/** A streamed preview's frames, each frame's JSON pretty-printed (null when it is not split). */
function frames(text) {
  const { kind, frames: split } = splitFrames(text);
  if (kind === "none" || (kind === "json" && split.length < 2)) return null; // one JSON body: not a stream
  return split.map((frame) => ({ label: frame.label, body: frame.payload === undefined ? frame.raw : pretty(frame.payload) }));
}

/** `delivered`: for a stream cut short, how many of its frames were sent (the rest are marked). */
function preview(title, id, text, size, truncated, streaming, realtime = false, delivered = null) {
  const section = h("section", { class: "preview", id }, h("h2", {}, title, h("span", { class: "muted" }, ` ${size} bytes${truncated ? ", preview cut" : ""}`)));
  // A realtime turn's events are JSON messages written back to back (its audio shown as a byte count).
  const split = realtime ? previewFrames(text, truncated) : streaming ? frames(text) || [] : [];
  if (split.length) {
    const list = h("ol", { class: "frames" });
    split.forEach((frame, index) => {
      const unsent = delivered !== null && index >= delivered;
      const label = unsent ? `${frame.label} (never sent: after the cut)` : frame.label;
      list.append(h("li", { class: unsent ? "unsent" : "" }, h("span", { class: "frame-label" }, label), h("pre", {}, frame.body)));
    });
    // Folded: the assembled text above says what the frames carried; open them to see each one.
    section.append(h("details", { class: "frames", id: `${id}-frames` }, h("summary", {}, `${split.length} frame${split.length === 1 ? "" : "s"}`), list));
    // No raw text beside a realtime turn's messages: it would hold the audio's base64.
    if (!realtime) section.append(h("details", {}, h("summary", {}, "raw"), h("pre", {}, text)));
  } else {
    section.append(h("pre", { class: "json" }, text == null ? "(no body recorded)" : pretty(text)));
  }
  return section;
}

function toolTable(title, id, items, kind) {
  if (!items || !items.length) return null;
  const head = kind === "result" ? ["call id", "name", "content"] : ["call id", "name", "arguments"];
  return h(
    "section",
    { id },
    h("h2", {}, title),
    h(
      "table",
      { class: "grid" },
      h("thead", {}, h("tr", {}, head.map((c) => h("th", {}, c)))),
      h(
        "tbody",
        {},
        items.map((item) =>
          h(
            "tr",
            {},
            h("td", { class: "mono" }, kind === "result" ? item.call_id : item.id),
            h("td", {}, item.name || ""),
            h("td", {}, h("pre", {}, pretty(kind === "result" ? item.content : item.arguments)), item.truncated ? h("span", { class: "muted" }, "(cut)") : null),
          ),
        ),
      ),
    ),
  );
}

function timeline(entry) {
  const start = entry.started_monotonic_seconds;
  const realtime = entry.operation === "realtime"; // one model turn of a WebSocket connection
  const events = [{ at: 0, label: realtime ? "turn asked for" : "request received", detail: `${entry.method} ${entry.path}` }];
  const plan = entry.stream_delivery;
  if (plan) {
    const where = plan.after_content_frames != null ? ` after ${plan.after_content_frames} content frame(s)` : "";
    events.push({ at: null, label: "delivery plan", detail: `${plan.mode}${where}${plan.delay_ms != null ? `, ${plan.delay_ms} ms` : ""}`, cls: "plan" });
  }
  if (entry.first_frame_monotonic_seconds != null) events.push({ at: ms(entry.first_frame_monotonic_seconds, start), label: "first frame written" });
  if (entry.streaming || entry.emitted_content_frames) events.push({ at: null, label: "content frames emitted", detail: String(entry.emitted_content_frames) });
  if (plan) events.push({ at: null, label: entry.stream_delivery_applied ? "plan applied" : "plan not applied", cls: entry.stream_delivery_applied ? "plan" : "" });
  if (entry.streaming) {
    const marker = realtime ? "terminal event" : "terminal marker";
    events.push({ at: null, label: entry.terminal_marker_observed ? `${marker} sent` : `no ${marker}`, cls: entry.terminal_marker_observed ? "good" : "bad" });
  }
  if (entry.last_frame_monotonic_seconds != null && entry.last_frame_monotonic_seconds !== entry.first_frame_monotonic_seconds) {
    events.push({ at: ms(entry.last_frame_monotonic_seconds, start), label: "last frame written" });
  }
  if (entry.transport_outcome) events.push({ at: null, label: "transport outcome", detail: entry.transport_outcome, cls: entry.transport_outcome === "completed" ? "good" : "bad" });
  if (entry.completed) {
    events.push({
      at: ms(entry.completed_monotonic_seconds, start),
      label: "completed",
      detail: `status ${entry.status ?? "none"}${entry.error_code ? `, ${entry.error_code}` : ""}${entry.success ? ", success" : ""}`,
      cls: entry.success ? "good" : "bad",
    });
  } else {
    events.push({ at: null, label: "in progress", cls: "pending" });
  }
  const list = h("ol", { class: "timeline", id: "timeline" });
  for (const event of events) {
    list.append(
      h(
        "li",
        { class: event.cls || "" },
        h("span", { class: "at" }, event.at == null ? "" : `+${event.at} ms`),
        h("span", { class: "what" }, event.label),
        event.detail ? h("span", { class: "detail" }, event.detail) : null,
      ),
    );
  }
  return list;
}

function facts(ctx, entry) {
  const rows = [
    ["request id", entry.request_id],
    ["sequence", entry.sequence],
    ["provider / operation", `${entry.provider} / ${entry.operation || "?"}`],
    ["model", entry.model],
    ["MCP server", entry.mcp_server],
    ["A2A agent", entry.a2a_agent],
    ["tool", entry.tool_name],
    ["realtime connection", entry.realtime_connection ? connectionLink(ctx.session, entry.realtime_connection) : null],
    ["events written", entry.operation === "realtime" ? entry.emitted_events : null],
    ["close frame sent", entry.close_code != null ? `${entry.close_code}${entry.close_reason ? ` ${entry.close_reason}` : ""}` : null],
    ["arguments", entry.arguments ? JSON.stringify(entry.arguments) : null],
    ["client answers", entry.client_answers && entry.client_answers.length ? entry.client_answers.map((a) => JSON.stringify(a)).join("\n") : null],
    ["status", entry.status],
    ["error code", entry.error_code],
    ["retry after", retryAfterText(entry).replace(/^retry after /, "") || null],
    ["latest user text", entry.prompt_text],
    ["answer", entry.answer_text],
    ["answered by", entry.scenario ? `${entry.scenario}${entry.response_index != null ? ` response ${entry.response_index}` : ""}` : null],
    [
      "conversation / step / turn",
      entry.conversation
        ? h("a", { href: sessionHash(ctx.session, "graphs"), title: "conversation graphs" }, `${entry.conversation} / ${entry.step || "-"} / ${entry.turn ?? "-"}`)
        : null,
    ],
    ["replayed", entry.replayed ? "yes" : null],
    ["started", when(entry.started_at)],
    ["usage", entry.usage ? Object.entries(entry.usage).map(([k, v]) => `${k} ${v}`).join(", ") : null],
    ["reasoning settings", entry.reasoning_settings ? JSON.stringify(entry.reasoning_settings) : null],
    ["wire", `${entry.wire_clock_mode} clock, created ${entry.wire_created_at ?? "-"}, #${entry.wire_sequence ?? "-"}`],
    ["truncated", entry.truncated ? "yes" : null],
  ];
  const list = h("dl", { class: "facts" });
  for (const [name, value] of rows) {
    if (value === null || value === undefined || value === "") continue;
    list.append(h("dt", {}, name), h("dd", {}, value instanceof Node ? value : String(value)));
  }
  return list;
}

function badge(entry) {
  const { text, cls, title } = statusBadge(entry);
  return h("span", { class: `badge ${cls}`, id: "status-badge", title }, entry.completed ? text : `${text === "…" ? "" : `${text} `}in progress`);
}

async function retryGroup(ctx, entry) {
  const { data } = await api.requests(ctx.session, { retry_group: entry.retry_group, order: "asc" });
  const list = h("ol", { class: "retry-group", id: "retry-group" });
  let previous = null;
  for (const attempt of data) {
    const gap = previous == null ? "" : ` (+${Math.round((attempt.started_monotonic_seconds - previous) * 1000)} ms)`;
    previous = attempt.started_monotonic_seconds;
    const wait = retryAfterText(attempt);
    const label = `#${attempt.sequence} status ${attempt.status ?? "…"}${attempt.error_code ? ` ${attempt.error_code}` : ""}${wait ? `, ${wait}` : ""}${gap}`;
    list.append(
      h(
        "li",
        { class: attempt.request_id === entry.request_id ? "current" : "" },
        h("a", { href: sessionHash(ctx.session, `requests/${encodeURIComponent(attempt.request_id)}`) }, label),
      ),
    );
  }
  return h("section", {}, h("h2", {}, `Retry group ${entry.retry_group}`), list);
}

export function mountRequest(root, ctx, requestId) {
  const message = h("p", { class: "error", role: "alert" });
  const holder = h("div", { id: "request-detail" });
  root.append(h("p", {}, h("a", { href: sessionHash(ctx.session, "journal") }, "‹ Journal")), message, holder);
  let stop = () => {};
  let shownComplete = false;

  async function load() {
    const { data } = await api.requests(ctx.session, { request_id: requestId });
    if (!data.length) {
      message.textContent = `No request ${requestId} in this session's journal (it may have been evicted or reset).`;
      stop();
      return;
    }
    const entry = data[0];
    if (shownComplete) return;
    shownComplete = entry.completed;
    if (entry.completed) stop();
    const realtime = entry.operation === "realtime";
    const assembled = assembleEntry(entry);
    const delivered = assembled && assembled.delivered < assembled.frames ? assembled.delivered : null;
    const parts = [
      h("h1", {}, `Request #${entry.sequence} `, badge(entry)),
      assembledSection(entry, assembled),
      facts(ctx, entry),
      realtime ? realtimeSection(ctx, entry) : null,
      h("section", {}, h("h2", {}, "Delivery"), timeline(entry)),
      preview("Request", "request-preview", entry.request_preview, entry.request_bytes, entry.request_truncated, false),
      preview("Response", "response-preview", entry.response_preview, entry.response_bytes, entry.response_truncated, entry.streaming, realtime, delivered),
      toolTable("Tool calls the answer made", "response-tool-calls", entry.response_tool_calls, "call"),
      toolTable("Tool calls in the request's history", "request-tool-calls", entry.request_tool_calls, "call"),
      toolTable("Tool results the request sent back", "tool-results", entry.tool_results, "result"),
    ];
    if (entry.retry_group) parts.push(await retryGroup(ctx, entry));
    clear(holder).append(...parts.filter(Boolean));
  }

  stop = poll(() => load().catch((error) => (message.textContent = errorText(error))), 1000);
  return () => stop();
}
