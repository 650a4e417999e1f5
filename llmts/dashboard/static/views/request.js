// One request: what was sent and answered (pretty-printed previews), its tool calls and results, and its
// delivery as a timeline (plan, frames emitted, terminal marker, transport outcome, retry group).
import { api, poll } from "../api.js";
import { clear, errorText, h, pretty, sessionHash, when } from "../dom.js";
import { connectionLink, realtimeSection } from "./realtime.js";
import { previewFrames } from "./realtime_events.js";

function ms(seconds, start) {
  return seconds == null ? null : Math.round((seconds - start) * 1000);
}

/** A streamed preview as frames: SSE events (their data pretty-printed) or NDJSON lines. */
function frames(text) {
  if (!text) return [];
  if (/^(event|data|id|:)/m.test(text) && text.includes("\n\n")) {
    return text
      .split(/\n\n+/)
      .filter((block) => block.trim())
      .map((block) => {
        const lines = block.split("\n");
        const event = lines.filter((l) => l.startsWith("event:")).map((l) => l.slice(6).trim()).join(" ");
        const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
        return { label: event || "data", body: pretty(data || block) };
      });
  }
  const lines = text.split("\n").filter((l) => l.trim());
  if (lines.length > 1 && lines.every((l) => l.trim().startsWith("{"))) {
    return lines.map((line, i) => ({ label: `line ${i + 1}`, body: pretty(line) }));
  }
  return [];
}

function preview(title, id, text, size, truncated, streaming, realtime = false) {
  const section = h("section", { class: "preview", id }, h("h2", {}, title, h("span", { class: "muted" }, ` ${size} bytes${truncated ? ", preview cut" : ""}`)));
  // A realtime turn's events are JSON messages written back to back (its audio shown as a byte count).
  const split = realtime ? previewFrames(text, truncated) : streaming ? frames(text) : [];
  if (split.length) {
    const list = h("ol", { class: "frames" });
    split.forEach((frame) => list.append(h("li", {}, h("span", { class: "frame-label" }, frame.label), h("pre", {}, frame.body))));
    // No raw text beside a realtime turn's messages: it would hold the audio's base64.
    section.append(list);
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

async function retryGroup(ctx, entry) {
  const { data } = await api.requests(ctx.session, { retry_group: entry.retry_group, order: "asc" });
  const list = h("ol", { class: "retry-group", id: "retry-group" });
  let previous = null;
  for (const attempt of data) {
    const gap = previous == null ? "" : ` (+${Math.round((attempt.started_monotonic_seconds - previous) * 1000)} ms)`;
    previous = attempt.started_monotonic_seconds;
    const label = `#${attempt.sequence} status ${attempt.status ?? "…"}${attempt.error_code ? ` ${attempt.error_code}` : ""}${gap}`;
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
    const parts = [
      h("h1", {}, `Request #${entry.sequence} `, h("span", { class: `badge ${entry.status >= 400 || entry.success === false ? "bad" : "good"}` }, String(entry.status ?? "in progress"))),
      facts(ctx, entry),
      realtime ? realtimeSection(ctx, entry) : null,
      h("section", {}, h("h2", {}, "Delivery"), timeline(entry)),
      preview("Request", "request-preview", entry.request_preview, entry.request_bytes, entry.request_truncated, false),
      preview("Response", "response-preview", entry.response_preview, entry.response_bytes, entry.response_truncated, entry.streaming, realtime),
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
