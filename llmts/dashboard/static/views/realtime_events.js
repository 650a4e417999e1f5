// A realtime turn as timeline rows (pure functions, no DOM: tests/dashboard calls them in the browser).
// The client events come summarised from the journal (`client_events`); the server events are the turn's
// messages in `response_preview`, written one after another as JSON (OpenAI Realtime events with a
// `type`, or Gemini Live messages keyed by `serverContent`, `toolCall`, ...). Deltas of one content part
// become one row with the assembled text; audio becomes a byte count, never base64.

import { valueEnd } from "./json_text.js";

const SHORT = 240; // characters of a row's text before it is cut with "…"
const TEXT_SHORT = 2000; // an assembled answer text may be longer
// Fields every OpenAI response event repeats: left out of its row (the raw event is in the preview).
const ROUTINE = ["type", "event_id", "response_id", "output_index", "content_index"];
const AUDIO_KEYS = new Set(["audio", "data"]); // base64 audio fields: shown as a byte count
// OpenAI Realtime deltas (GA names, and the beta names of the same events).
const TEXT_DELTAS = new Set(["response.output_text.delta", "response.text.delta"]);
const TRANSCRIPT_DELTAS = new Set(["response.output_audio_transcript.delta", "response.audio_transcript.delta"]);
const AUDIO_DELTAS = new Set(["response.output_audio.delta", "response.audio.delta"]);

export function shorten(text, limit = SHORT) {
  const value = String(text);
  return value.length > limit ? `${value.slice(0, limit - 1)}…` : value;
}

/** A long connection id in a list: `rtc_…` and its last 6 characters (the full id goes in a title). */
export function shortConnection(id) {
  if (!id) return "";
  return id.length > 14 ? `${id.slice(0, 4)}…${id.slice(-6)}` : id;
}

/** Bytes a base64 string decodes to. */
export function base64Bytes(text) {
  if (typeof text !== "string" || !text) return 0;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((text.length * 3) / 4) - padding);
}

/** JSON text of a value with base64 audio replaced by its size (for rows and pretty previews). */
export function withoutAudio(value, indent) {
  return JSON.stringify(
    value,
    function elide(key, field) {
      if (typeof field !== "string") return field;
      const audio = (AUDIO_KEYS.has(key) && field.length > 16) || (key === "delta" && AUDIO_DELTAS.has(this.type));
      return audio ? `<${base64Bytes(field)} bytes of audio>` : field;
    },
    indent,
  );
}

/**
 * The server messages of a preview: JSON values written back to back (whitespace between them allowed).
 * Each is `{value, raw}`; `value` is null for text that is not JSON (`cut` when it is the preview's cut end).
 */
export function splitMessages(text, truncated = false) {
  const messages = [];
  if (!text) return messages;
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i])) {
      i += 1;
      continue;
    }
    const start = i;
    if (text[i] !== "{" && text[i] !== "[") {
      // Not the start of a message: everything up to the next one is shown as it is.
      while (i < text.length && text[i] !== "{" && text[i] !== "[") i += 1;
      messages.push({ value: null, raw: text.slice(start, i).trim(), cut: false });
      continue;
    }
    const end = valueEnd(text, start);
    if (end === -1) {
      const next = truncated ? -1 : text.indexOf("{", start + 1);
      const stop = next === -1 ? text.length : next;
      messages.push({ value: null, raw: text.slice(start, stop), cut: next === -1 && truncated });
      i = stop;
      continue;
    }
    const raw = text.slice(start, end);
    let value = null;
    try {
      value = JSON.parse(raw);
    } catch {
      value = null;
    }
    messages.push({ value, raw, cut: false });
    i = end;
  }
  return messages;
}

/** A short `key=value, ...` text of an event's fields (its type and event id left out). */
export function summary(event, skip = ["type", "event_id"]) {
  const parts = [];
  for (const [key, value] of Object.entries(event || {})) {
    if (skip.includes(key) || value === null || value === undefined) continue;
    if (AUDIO_KEYS.has(key) && typeof value === "string") parts.push(`${key}: ${base64Bytes(value)} bytes`);
    else if (typeof value === "string") parts.push(`${key}=${value}`);
    else parts.push(`${key}=${withoutAudio(value)}`);
  }
  return shorten(parts.join(", "));
}

/** A row of the timeline: which side, the event type, its short text, a kind for highlighting. */
function row(side, type, text, kind = "") {
  return { side, type, text, kind, count: 1 };
}

/** The client events since the previous turn (as the journal summarised them). */
export function clientRows(events) {
  return (events || []).map((event) => {
    const type = String(event.type ?? "?");
    const output = functionOutput(event);
    const kind = output || isToolOutput(event) ? "tool-output" : event.audio_bytes != null ? "audio" : "";
    const head = [];
    const skip = ["type", "event_id", "audio_bytes"];
    if (output) {
      head.push(`${output.call_id} → ${withText(output.output)}`);
      skip.push(...(output.nested ? ["item"] : ["call_id", "output"]));
      if (output.nested && output.type) head.push(`item ${output.type}`);
    }
    if (event.audio_bytes != null) head.push(`audio: ${event.audio_bytes} bytes`);
    return row("client", type, shorten([...head, summary(event, skip)].filter(Boolean).join(", ")), kind);
  });
}

// A function output the client sent: `call_id` and `output` on the event or on its `item`.
function functionOutput(event) {
  if (event.call_id != null && "output" in event) return { call_id: event.call_id, output: event.output, nested: false };
  const item = event.item;
  if (item && typeof item === "object" && item.call_id != null && "output" in item) {
    return { call_id: item.call_id, output: item.output, type: item.type, nested: true };
  }
  return null;
}

function isToolOutput(event) {
  if (event.call_id != null && "response" in event) return true;
  return /function_call_output|tool_response|function_response/i.test(`${event.type} ${event.item_type ?? ""}`);
}

function withText(value) {
  return typeof value === "string" ? value : withoutAudio(value);
}

/** Rows of the server's messages: deltas of one part joined, audio counted, tool calls marked. */
export function serverRows(messages) {
  const rows = [];
  const parts = new Map(); // part key -> its row, while deltas keep coming
  const assemble = (key, type, text, kind) => {
    const existing = parts.get(key);
    if (existing) {
      existing.text += text;
      existing.count += 1;
      return;
    }
    const created = row("server", type, text, kind);
    parts.set(key, created);
    rows.push(created);
  };
  const audio = (key, type, bytes) => {
    const existing = parts.get(key);
    if (existing) {
      existing.bytes += bytes;
      existing.count += 1;
      existing.text = `audio: ${existing.bytes} bytes`;
      return;
    }
    const created = { ...row("server", type, `audio: ${bytes} bytes`, "audio"), bytes };
    parts.set(key, created);
    rows.push(created);
  };
  for (const message of messages) {
    const value = message.value;
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      const raw = message.raw ?? withoutAudio(value);
      rows.push(row("server", message.cut ? "(preview cut)" : "(not an event)", shorten(raw), message.cut ? "" : "error"));
    } else if (typeof value.type === "string") {
      openaiEvent(value, rows, assemble, audio);
    } else {
      geminiMessage(value, rows, assemble, audio, parts);
    }
  }
  for (const r of rows) r.text = shorten(r.text, r.kind === "text" ? TEXT_SHORT : SHORT);
  return rows;
}

function openaiEvent(event, rows, assemble, audio) {
  const type = event.type;
  const part = `${event.item_id ?? ""}:${event.content_index ?? 0}`;
  if (TEXT_DELTAS.has(type)) assemble(`text:${part}`, type, String(event.delta ?? ""), "text");
  else if (TRANSCRIPT_DELTAS.has(type)) assemble(`transcript:${part}`, type, String(event.delta ?? ""), "text");
  else if (AUDIO_DELTAS.has(type)) audio(`audio:${part}`, type, base64Bytes(event.delta));
  else if (type === "response.function_call_arguments.delta") {
    assemble(`arguments:${event.call_id ?? event.item_id}`, type, String(event.delta ?? ""), "tool");
  } else if (type === "response.function_call_arguments.done") {
    rows.push(row("server", type, `${event.name ?? "?"}(${event.arguments ?? ""}) ${event.call_id ?? ""}`.trim(), "tool"));
  } else if ((type === "response.output_item.added" || type === "response.output_item.done") && event.item && event.item.type === "function_call") {
    const item = event.item;
    rows.push(row("server", type, `function_call ${item.name ?? "?"} ${item.call_id ?? ""}${item.arguments ? ` ${item.arguments}` : ""}`.trim(), "tool"));
  } else if (type === "response.done") {
    const response = event.response || {};
    const details = response.status_details || {};
    const usage = response.usage ? `, usage ${response.usage.input_tokens ?? "?"} in / ${response.usage.output_tokens ?? "?"} out` : "";
    const reason = details.reason ? ` (${details.reason})` : details.error ? ` (${withoutAudio(details.error)})` : "";
    rows.push(row("server", type, `status ${response.status ?? "?"}${reason}${usage}`, response.status === "completed" ? "done" : "error"));
  } else if (type === "error") {
    const error = event.error || {};
    rows.push(row("server", type, `${error.code ?? error.type ?? "error"}: ${error.message ?? ""}`, "error"));
  } else {
    rows.push(row("server", type, summary(event, ROUTINE)));
  }
}

// Gemini Live: one message may carry several things (a model turn's parts, transcriptions, usage).
function geminiMessage(message, rows, assemble, audio, parts) {
  const breakParts = () => parts.clear(); // a tool call or turn end: later text is a new part
  for (const [key, body] of Object.entries(message)) {
    if (key === "serverContent" && body && typeof body === "object") {
      for (const [field, value] of Object.entries(body)) geminiContent(field, value, rows, assemble, audio, breakParts);
    } else if (key === "toolCall" && body && Array.isArray(body.functionCalls)) {
      breakParts();
      for (const call of body.functionCalls) {
        rows.push(row("server", "toolCall.functionCalls", `${call.name ?? "?"}(${withoutAudio(call.args ?? {})}) ${call.id ?? ""}`.trim(), "tool"));
      }
    } else if (key === "usageMetadata" && body) {
      rows.push(row("server", key, `prompt ${body.promptTokenCount ?? "?"}, response ${body.responseTokenCount ?? "?"}, total ${body.totalTokenCount ?? "?"}`));
    } else {
      rows.push(row("server", key, body && typeof body === "object" ? summary(body, []) : String(body)));
    }
  }
}

function geminiContent(field, value, rows, assemble, audio, breakParts) {
  if (field === "modelTurn" && value && Array.isArray(value.parts)) {
    for (const part of value.parts) {
      if (typeof part.text === "string") {
        const thought = part.thought === true;
        assemble(thought ? "gemini:thought" : "gemini:text", `serverContent.modelTurn.parts[].${thought ? "thought" : "text"}`, part.text, "text");
      } else if (part.inlineData) {
        audio("gemini:audio", `serverContent.modelTurn.parts[].inlineData ${part.inlineData.mimeType ?? ""}`.trim(), base64Bytes(part.inlineData.data));
      } else {
        rows.push(row("server", "serverContent.modelTurn.parts[]", summary(part, [])));
      }
    }
  } else if ((field === "outputTranscription" || field === "inputTranscription") && value) {
    assemble(`gemini:${field}`, `serverContent.${field}`, String(value.text ?? ""), "text");
  } else if (field === "turnComplete" || field === "interrupted" || field === "generationComplete") {
    if (value === false) return;
    breakParts();
    rows.push(row("server", `serverContent.${field}`, "", field === "turnComplete" ? "done" : field === "interrupted" ? "error" : ""));
  } else {
    rows.push(row("server", `serverContent.${field}`, value && typeof value === "object" ? summary(value, []) : String(value)));
  }
}

/** How the turn ended, from the evidence fields: `{label, detail, cls}`. */
export function turnOutcome(entry) {
  const written = entry.emitted_events ? `${entry.emitted_events} event(s) written` : "";
  if (!entry.completed) return { label: "in progress", detail: written, cls: "pending" };
  if (entry.close_code != null) {
    const reason = entry.close_reason ? ` ${entry.close_reason}` : "";
    return { label: "closed", detail: `code ${entry.close_code}${reason}${written ? `; ${written}` : ""}`, cls: entry.close_code === 1000 ? "" : "bad" };
  }
  const code = entry.error_code || "";
  if (code.startsWith("cancelled")) {
    const reason = code.replace(/^cancelled_?/, "");
    return { label: "cancelled", detail: [reason, written].filter(Boolean).join("; "), cls: "bad" };
  }
  if (entry.transport_outcome === "aborted") return { label: "aborted", detail: `connection dropped without a close frame${written ? `; ${written}` : ""}`, cls: "bad" };
  if (entry.transport_outcome === "client_gone") return { label: "client gone", detail: written, cls: "bad" };
  if (code) return { label: "failed", detail: `${code}${entry.status != null ? `, status ${entry.status}` : ""}`, cls: "bad" };
  if (entry.transport_outcome === "early_end") return { label: "ended early", detail: `no terminal event${written ? `; ${written}` : ""}`, cls: "bad" };
  const terminal = entry.terminal_marker_observed ? "terminal event sent" : "";
  return { label: "completed", detail: [written, terminal].filter(Boolean).join(", "), cls: "good" };
}

/** All rows of one turn: the client's events, then the server's, then the outcome. */
export function turnRows(entry) {
  const server = serverRows(splitMessages(entry.response_preview, entry.response_truncated));
  return { client: clientRows(entry.client_events), server, outcome: turnOutcome(entry) };
}

/** The response preview as frames for the request page: one pretty-printed message each, audio elided. */
export function previewFrames(text, truncated = false) {
  return splitMessages(text, truncated).map((message, index) => {
    if (message.value === null) return { label: message.cut ? "(preview cut)" : `message ${index + 1}`, body: message.raw };
    const label = typeof message.value.type === "string" ? message.value.type : Object.keys(message.value).join(" + ");
    return { label, body: withoutAudio(message.value, 2) };
  });
}
