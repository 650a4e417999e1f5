// A streamed answer as the client received it, assembled from the frames of a journal entry's
// `response_preview` (the stream's bytes as written): pure functions, no DOM, so the request page and the
// browser tests call the same code. Each frame is read by its shape, whatever the route:
//   OpenAI Chat (and Azure, Ollama's /v1): choices[0].delta.content, refusal, tool_calls[].function
//   OpenAI Responses: response.output_text.delta, refusal and reasoning deltas, function-call arguments
//   Anthropic Messages: content_block_delta text_delta, thinking_delta, input_json_delta
//   Gemini: candidates[0].content.parts[] text (thought: thinking) and functionCall
//   Cohere v2: content-delta delta.message.content.text (thinking), tool-plan-delta, tool-call-*
//   Ollama NDJSON: message.content / thinking / tool_calls, or generate's response / thinking
//   Bedrock: the AWS event stream's JSON payloads (ConverseStream contentBlockDelta; InvokeModel's
//   base64 `chunk` bytes holding an Anthropic, Nova or Titan body), read best effort from the text.

import { valueEnd } from "./json_text.js";

/** SSE blocks ({event, data}) when `text` looks like SSE, else null. */
function sseBlocks(text) {
  if (!/^(event|data|id|:)/m.test(text) || !/\r?\n\r?\n/.test(text)) return null;
  return text
    .split(/\r?\n\r?\n+/)
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split(/\r?\n/);
      const event = lines.filter((l) => l.startsWith("event:")).map((l) => l.slice(6).trim()).join(" ");
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      return { event, data, raw: block };
    });
}

function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

/** The top-level JSON objects of NDJSON or of a streamed JSON array ([{...},{...}]), in order. */
function jsonObjects(text) {
  const frames = [];
  let at = text.indexOf("{");
  while (at !== -1) {
    const end = valueEnd(text, at);
    const raw = end === -1 ? text.slice(at) : text.slice(at, end);
    const parsed = end === -1 ? null : parseJson(raw);
    frames.push({ raw, payload: parsed ? parsed.value : undefined });
    if (end === -1) break;
    at = text.indexOf("{", end);
  }
  return frames;
}

/** AWS event-stream messages read from their UTF-8 text: each `:event-type` (or `:exception-type`)
 * header's name and the JSON payload after the headers (headers hold no "{"). */
function eventStreamMessages(text) {
  const frames = [];
  const header = /:(event|exception)-type\x07[\s\S]{2}([A-Za-z][A-Za-z0-9_.-]*)/g;
  let match;
  while ((match = header.exec(text)) !== null) {
    const start = text.indexOf("{", header.lastIndex);
    const next = text.indexOf(":event-type", header.lastIndex);
    if (start === -1 || (next !== -1 && next < start)) {
      frames.push({ label: match[2], raw: "", payload: undefined });
      continue;
    }
    const end = valueEnd(text, start);
    const raw = end === -1 ? text.slice(start) : text.slice(start, end);
    const parsed = end === -1 ? null : parseJson(raw);
    const label = match[1] === "exception" ? `exception ${match[2]}` : match[2];
    frames.push({ label, raw, payload: parsed ? parsed.value : undefined, eventType: match[2], exception: match[1] === "exception" });
    if (end !== -1) header.lastIndex = end;
  }
  return frames;
}

function isEventStream(text) {
  return text.includes(":event-type") && text.includes(":message-type");
}

/**
 * A streamed preview split into frames: {kind, frames}. `kind` is "sse" (SSE events), "json" (NDJSON
 * lines or a streamed JSON array), "eventstream" (the JSON messages of an AWS event stream) or "none";
 * each frame is {label, raw, payload} where `payload` is its parsed JSON (undefined when it is not JSON:
 * `[DONE]`, a frame the preview cut, a broken frame) and `raw` its text.
 */
export function splitFrames(text) {
  if (!text) return { kind: "none", frames: [] };
  if (isEventStream(text)) return { kind: "eventstream", frames: eventStreamMessages(text) };
  const blocks = sseBlocks(text);
  if (blocks) {
    const frames = blocks.map((block) => {
      const parsed = block.data ? parseJson(block.data) : null;
      return { label: block.event || "data", raw: block.data || block.raw, payload: parsed ? parsed.value : undefined };
    });
    return { kind: "sse", frames };
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    const unit = trimmed.startsWith("[") ? "item" : "line";
    return { kind: "json", frames: jsonObjects(text).map((f, i) => ({ ...f, label: `${unit} ${i + 1}` })) };
  }
  return { kind: "none", frames: [] };
}

/** The pieces of an answer, accumulated frame by frame. */
function newAnswer() {
  return { wire: null, text: "", thinking: "", refusal: "", toolPlan: "", calls: new Map(), errors: [], otherChoices: 0 };
}

function call(answer, key, { id, name } = {}) {
  if (!answer.calls.has(key)) answer.calls.set(key, { id: null, name: null, arguments: "" });
  const found = answer.calls.get(key);
  if (id) found.id = id;
  if (name) found.name = name;
  return found;
}

function str(value) {
  return typeof value === "string" ? value : "";
}

function argumentsText(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function base64Json(data) {
  try {
    const binary = atob(data);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

function openaiChat(answer, p) {
  if (!Array.isArray(p.choices)) return false;
  answer.wire = answer.wire || (p.object === "text_completion" ? "OpenAI Completions" : "OpenAI Chat Completions");
  for (const choice of p.choices) {
    if ((choice.index ?? 0) !== 0) {
      answer.otherChoices = Math.max(answer.otherChoices, choice.index);
      continue;
    }
    if (typeof choice.text === "string") answer.text += choice.text; // legacy completions
    const delta = choice.delta || {};
    answer.text += str(delta.content);
    answer.refusal += str(delta.refusal);
    answer.thinking += str(delta.reasoning_content) + str(delta.reasoning);
    (delta.tool_calls || []).forEach((tc, i) => {
      const found = call(answer, `c${tc.index ?? i}`, { id: tc.id, name: tc.function && tc.function.name });
      found.arguments += argumentsText(tc.function && tc.function.arguments);
    });
  }
  return true;
}

function openaiResponses(answer, p) {
  const type = p.type;
  if (typeof type !== "string") return false;
  if (type === "transcript.text.delta") {
    answer.wire = answer.wire || "OpenAI transcription";
    answer.text += str(p.delta);
    return true;
  }
  if (type === "transcript.text.done") return true; // the whole text again, and usage: the deltas had it
  if (!type.startsWith("response.")) return false;
  answer.wire = answer.wire || "OpenAI Responses";
  if (type === "response.output_text.delta") answer.text += str(p.delta);
  else if (type === "response.refusal.delta") answer.refusal += str(p.delta);
  else if (type === "response.reasoning_text.delta" || type === "response.reasoning_summary_text.delta") answer.thinking += str(p.delta);
  else if (type === "response.output_item.added" && p.item && /call$/.test(p.item.type || "")) {
    call(answer, `r${p.item.id}`, { id: p.item.call_id, name: p.item.name });
  } else if (type === "response.function_call_arguments.delta" || type === "response.custom_tool_call_input.delta") {
    call(answer, `r${p.item_id}`).arguments += str(p.delta);
  } else if (type === "response.failed" || type === "error") {
    const error = (p.response && p.response.error) || p.error || p;
    answer.errors.push(error.message || JSON.stringify(error));
  }
  return true;
}

function anthropic(answer, p) {
  const type = p.type;
  if (!["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping"].includes(type)) {
    return false;
  }
  answer.wire = answer.wire || "Anthropic Messages";
  if (type === "content_block_start" && p.content_block && /tool_use$/.test(p.content_block.type || "")) {
    call(answer, `a${p.index}`, { id: p.content_block.id, name: p.content_block.name });
  } else if (type === "content_block_delta" && p.delta) {
    if (p.delta.type === "text_delta") answer.text += str(p.delta.text);
    else if (p.delta.type === "thinking_delta") answer.thinking += str(p.delta.thinking);
    else if (p.delta.type === "input_json_delta") call(answer, `a${p.index}`).arguments += str(p.delta.partial_json);
  }
  return true;
}

function gemini(answer, p) {
  if (!Array.isArray(p.candidates)) return false;
  answer.wire = answer.wire || "Gemini";
  const candidate = p.candidates.find((c) => (c.index ?? 0) === 0);
  const parts = (candidate && candidate.content && candidate.content.parts) || [];
  for (const part of parts) {
    if (typeof part.text === "string") {
      if (part.thought) answer.thinking += part.text;
      else answer.text += part.text;
    }
    if (part.functionCall) {
      const fn = part.functionCall;
      call(answer, `g${answer.calls.size}`, { id: fn.id, name: fn.name }).arguments += argumentsText(fn.args);
    }
  }
  return true;
}

function cohere(answer, p) {
  const type = p.type;
  if (typeof type !== "string" || !/^(message|content|tool-plan|tool-call|citation)-/.test(type)) return false;
  answer.wire = answer.wire || "Cohere v2 chat";
  const message = (p.delta && p.delta.message) || {};
  if (type === "content-delta") {
    const content = message.content || {};
    answer.text += str(content.text);
    answer.thinking += str(content.thinking);
  } else if (type === "tool-plan-delta") {
    answer.toolPlan += str(message.tool_plan);
  } else if (type === "tool-call-start" || type === "tool-call-delta") {
    const tc = message.tool_calls || {};
    const fn = tc.function || {};
    call(answer, `k${p.index ?? 0}`, { id: tc.id, name: fn.name }).arguments += argumentsText(fn.arguments);
  }
  return true;
}

function ollama(answer, p) {
  if (p.message && typeof p.message === "object") {
    answer.wire = answer.wire || "Ollama chat";
    answer.text += str(p.message.content);
    answer.thinking += str(p.message.thinking);
    for (const tc of p.message.tool_calls || []) {
      const fn = tc.function || {};
      call(answer, `o${answer.calls.size}`, { id: tc.id, name: fn.name }).arguments += argumentsText(fn.arguments);
    }
    return true;
  }
  if (typeof p.response === "string" && "done" in p) {
    answer.wire = answer.wire || "Ollama generate";
    answer.text += p.response;
    answer.thinking += str(p.thinking);
    return true;
  }
  return false;
}

/** A Bedrock ConverseStream event (by its event type) or an InvokeModel body chunk (Nova, Titan). */
function bedrockEvent(answer, eventType, p) {
  if (eventType === "contentBlockStart") {
    const tool = p.start && p.start.toolUse;
    if (tool) call(answer, `b${p.contentBlockIndex}`, { id: tool.toolUseId, name: tool.name });
    return true;
  }
  if (eventType === "contentBlockDelta") {
    const delta = p.delta || {};
    answer.text += str(delta.text);
    answer.thinking += str(delta.reasoningContent && delta.reasoningContent.text);
    if (delta.toolUse) call(answer, `b${p.contentBlockIndex}`).arguments += argumentsText(delta.toolUse.input);
    return true;
  }
  return ["messageStart", "contentBlockStop", "messageStop", "metadata"].includes(eventType);
}

function bedrockChunk(answer, body) {
  if (!body || typeof body !== "object") return false;
  if (anthropic(answer, body)) {
    answer.wire = "Bedrock InvokeModelWithResponseStream (Anthropic body)";
    return true;
  }
  const nova = Object.keys(body).find((key) => ["contentBlockDelta", "contentBlockStart", "messageStart", "messageStop", "contentBlockStop", "metadata"].includes(key));
  if (nova) {
    answer.wire = "Bedrock InvokeModelWithResponseStream (Nova body)";
    return bedrockEvent(answer, nova, body[nova]);
  }
  if (typeof body.outputText === "string") {
    answer.wire = "Bedrock InvokeModelWithResponseStream (Titan body)";
    answer.text += body.outputText;
    return true;
  }
  return false;
}

function bedrock(answer, frame) {
  const p = frame.payload;
  if (frame.exception) {
    answer.errors.push(`${frame.eventType}: ${(p && (p.message || p.Message)) || frame.raw}`);
    return true;
  }
  if (p === undefined || p === null || typeof p !== "object") return false; // cut by the preview, or broken
  if (frame.eventType === "chunk") return bedrockChunk(answer, typeof p.bytes === "string" ? base64Json(p.bytes) : undefined);
  answer.wire = answer.wire || "Bedrock ConverseStream";
  return bedrockEvent(answer, frame.eventType, p);
}

function errorFrame(answer, p, frame) {
  if (frame.label === "error" || p.type === "error" || (p.error && typeof p.error === "object" && !Array.isArray(p.choices))) {
    const error = p.error || p;
    answer.errors.push(str(error.message) || JSON.stringify(error));
    return true;
  }
  return false;
}

const READERS = [openaiChat, openaiResponses, anthropic, gemini, cohere, ollama];

/** Reads one frame into `answer`: whether its shape was known. */
function readFrame(answer, frame) {
  if (frame.eventType !== undefined) return bedrock(answer, frame);
  const p = frame.payload;
  if (p === undefined || p === null || typeof p !== "object") return frame.raw.trim() === "[DONE]" ? null : false;
  return errorFrame(answer, p, frame) || READERS.some((reader) => reader(answer, p));
}

/**
 * The answer the client received, assembled from a streamed `preview`:
 * {assembled, wire, text, thinking, refusal, toolPlan, toolCalls: [{id, name, arguments}], errors,
 *  frames, delivered, unread, otherChoices, reason}. `assembled` is false, with `reason`, when no frame
 * has a shape this module reads (the frames are still listed on the page).
 *
 * `contentFrames`: for a stream cut short, how many content frames (frames that add answer text) reached
 * the socket (the entry's `emitted_content_frames`). The preview holds every frame llmts rendered, so
 * reading stops after that many; `delivered` is the number of frames read, the rest were never sent.
 */
export function assembleStream(preview, { contentFrames = null } = {}) {
  const { frames } = splitFrames(preview || "");
  const answer = newAnswer();
  let read = 0;
  let unread = 0;
  let delivered = 0;
  let content = 0;
  for (const frame of frames) {
    if (contentFrames !== null && content >= contentFrames) break;
    const before = answer.text.length;
    const known = readFrame(answer, frame);
    delivered += 1;
    if (known) read += 1;
    else if (known === false) unread += 1;
    if (answer.text.length > before) content += 1;
  }
  const toolCalls = [...answer.calls.values()];
  const result = {
    assembled: read > 0 && answer.wire !== null,
    wire: answer.wire,
    text: answer.text,
    thinking: answer.thinking,
    refusal: answer.refusal,
    toolPlan: answer.toolPlan,
    toolCalls,
    errors: answer.errors,
    frames: frames.length,
    delivered,
    unread,
    otherChoices: answer.otherChoices,
    reason: "",
  };
  if (!frames.length) result.reason = preview ? "the preview holds no frames this page can split" : "nothing was written";
  else if (!result.assembled) result.reason = "no frame has the shape of a provider stream this page reads";
  return result;
}
