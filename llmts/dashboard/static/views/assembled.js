// The request page's "Assembled text" section: what the client of a streamed answer received, put
// together from the frames (views/assemble.js), with notes on why it may be less than the answer.
import { append, h, pretty } from "../dom.js";
import { assembleStream } from "./assemble.js";

// Operations whose streams carry no text: speech's audio chunks and images' partial images.
const WITHOUT_TEXT = new Set(["speech", "images"]);

/** Whether the entry gets the section: a model's streamed text answer (not an error body, not audio or
 * images, not a realtime turn, not an MCP or A2A peer's stream). */
function hasAssembledText(entry) {
  if (!entry.streaming || entry.operation === "realtime" || entry.mcp_server || entry.a2a_agent) return false;
  if (WITHOUT_TEXT.has(entry.operation)) return false;
  if (entry.provider === "mcp" || entry.provider === "a2a") return false;
  return entry.status == null || entry.status < 400;
}

function cutShort(entry) {
  return entry.completed && entry.transport_outcome != null && entry.transport_outcome !== "completed";
}

// A delivery plan that cut the stream counted each content frame as its write returned, so that count
// says where the client's text ends. Without one (a client gone, a shutdown) the count may be all or
// nothing, and the page says it cannot tell.
function countedCut(entry) {
  return cutShort(entry) && entry.stream_delivery_applied === true;
}

/** The entry's streamed answer as the client received it (views/assemble.js), or null when it has none:
 * a stream a delivery plan cut short is read only up to the content frames that reached the socket. */
export function assembleEntry(entry) {
  if (!hasAssembledText(entry)) return null;
  const contentFrames = countedCut(entry) ? entry.emitted_content_frames ?? 0 : null;
  return assembleStream(entry.response_preview, { contentFrames });
}

function notes(entry, result) {
  const items = [];
  const outcome = entry.transport_outcome;
  if (!entry.completed) {
    items.push(["in-progress", "The stream is still being written: this is the text so far."]);
  } else if (outcome && outcome !== "completed") {
    const frames = `${entry.emitted_content_frames ?? 0} content frame${entry.emitted_content_frames === 1 ? "" : "s"} written`;
    const marker = entry.terminal_marker_observed ? "terminal marker sent" : "no terminal marker";
    const received = countedCut(entry)
      ? "This is all the client received."
      : "How much of it the client read is not known: this is every frame llmts rendered.";
    let text = `Cut short: transport outcome ${outcome} (${frames}, ${marker}${entry.error_code ? `, ${entry.error_code}` : ""}). ${received}`;
    // After a counted cut the journal's answer_text is what was delivered; otherwise it is the answer chosen.
    if (entry.answer_text && !countedCut(entry)) text += ` llmts meant to send: “${entry.answer_text}”`;
    items.push(["cut-short", text]);
    const unsent = result.frames - result.delivered;
    if (unsent > 0) {
      items.push(["unsent", `The preview holds every frame llmts rendered: the last ${unsent} (after the cut) were never sent and are left out.`]);
    }
  }
  if (entry.response_truncated) {
    items.push([
      "truncated",
      `The preview holds only the start of the ${entry.response_bytes} bytes written (the journal's preview_bytes): the text is assembled from what it holds.`,
    ]);
  }
  if (result.unread) {
    items.push(["unread", `${result.unread} frame${result.unread === 1 ? "" : "s"} not read (not JSON, cut by the preview, or of a shape this page does not know).`]);
  }
  if (result.otherChoices) items.push(["choices", `The stream carries choices 0 to ${result.otherChoices}; choice 0 is shown.`]);
  if (result.wire && result.wire.startsWith("Bedrock")) {
    items.push(["best-effort", "Read best effort from the binary AWS event stream's text (payloads only; no checksum checked)."]);
  }
  return items;
}

function block(title, id, text) {
  if (!text) return null;
  return h("div", { class: "assembled-part" }, h("h3", {}, title), h("pre", { id, class: "assembled" }, text));
}

function toolCalls(calls) {
  if (!calls.length) return null;
  return h(
    "div",
    { class: "assembled-part" },
    h("h3", {}, "Tool calls (arguments assembled from their fragments)"),
    h(
      "table",
      { class: "grid", id: "assembled-tool-calls" },
      h("thead", {}, h("tr", {}, ["call id", "name", "arguments"].map((c) => h("th", {}, c)))),
      h(
        "tbody",
        {},
        calls.map((c) => h("tr", {}, h("td", { class: "mono" }, c.id || ""), h("td", {}, c.name || ""), h("td", {}, h("pre", {}, pretty(c.arguments))))),
      ),
    ),
  );
}

/** The section for `result` (assembleEntry's), or null when the entry has no streamed answer. */
export function assembledSection(entry, result) {
  if (!result) return null;
  const section = h("section", { id: "assembled", "data-wire": result.wire || "" });
  section.append(h("h2", {}, "Assembled text", h("span", { class: "muted" }, result.wire ? ` ${result.wire}, ${result.frames} frames` : "")));
  const list = h("ul", { class: "assembled-notes", id: "assembled-notes" });
  if (!result.assembled) {
    list.append(h("li", { "data-note": "not-assembled" }, `Not assembled: ${result.reason}. The frames are listed under Response.`));
  }
  for (const [kind, text] of notes(entry, result)) list.append(h("li", { "data-note": kind, class: kind === "cut-short" ? "bad" : "" }, text));
  if (list.children.length) section.append(list);
  if (!result.assembled) return section;
  section.append(h("pre", { id: "assembled-text", class: "assembled" }, result.text));
  append(section, [
    block("Refusal", "assembled-refusal", result.refusal),
    block("Thinking", "assembled-thinking", result.thinking),
    block("Tool plan", "assembled-tool-plan", result.toolPlan),
    toolCalls(result.toolCalls),
    block("Error frames", "assembled-errors", result.errors.join("\n")),
  ]);
  return section;
}
