// What the official JS/TS SDKs do with each stream delivery fault: every JS cell of the SDK table in
// docs/stream-delivery.md is one assertion here. Run with `tox -e js` (or `npm test` with LLMTS_PYTHON).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

import { Control, startServer } from "./llmts.mjs";

const MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"];
const HI = [{ role: "user", content: "Hi" }];

let server;
let control;
before(async () => {
  server = await startServer();
  control = new Control(server.url);
});
after(() => server?.stop());

/** A session whose first answer carries `plan`; the next one is "Next." (what a retry gets). */
async function faulted(plan) {
  return control.session({
    models: MODELS,
    scenarios: [
      {
        responses: [
          { text: "First second.", chunks: ["First ", "second."], stream_delivery: plan },
          { text: "Next." },
        ],
      },
    ],
  });
}

const openai = (base, options) => new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: "k", ...options });
const anthropic = (base, options) => new Anthropic({ baseURL: `${base}/anthropic`, apiKey: "k", ...options });
const gemini = (base, httpOptions = {}) =>
  new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: `${base}/gemini`, ...httpOptions } });

// Each surface returns a plain summary of what the caller saw, or throws what the SDK threw.
const SURFACES = {
  async chat(base, options) {
    const stream = await openai(base, options).chat.completions.create({
      model: "gpt-4.1-mini",
      messages: HI,
      stream: true,
    });
    let text = "";
    let finished = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      finished ||= Boolean(chunk.choices[0]?.finish_reason);
    }
    return { text, finished };
  },
  async chatHelper(base, options) {
    const stream = openai(base, options).chat.completions.stream({ model: "gpt-4.1-mini", messages: HI });
    const completion = await stream.finalChatCompletion();
    return { text: completion.choices[0].message.content, finished: Boolean(completion.choices[0].finish_reason) };
  },
  async responses(base, options) {
    const stream = await openai(base, options).responses.create({ model: "gpt-4.1-mini", input: "Hi", stream: true });
    let text = "";
    let finished = false;
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") text += event.delta;
      finished ||= event.type === "response.completed";
    }
    return { text, finished };
  },
  async responsesHelper(base, options) {
    const stream = openai(base, options).responses.stream({ model: "gpt-4.1-mini", input: "Hi" });
    const response = await stream.finalResponse();
    const finished = response.status === "completed";
    return { text: response.output_text, finished, ...(finished ? {} : { status: response.status }) };
  },
  async anthropic(base, options) {
    const stream = await anthropic(base, options).messages.create({
      model: "claude-test-1",
      max_tokens: 64,
      messages: HI,
      stream: true,
    });
    let text = "";
    let finished = false;
    for await (const event of stream) {
      if (event.type === "content_block_delta") text += event.delta.text ?? "";
      finished ||= event.type === "message_stop";
    }
    return { text, finished };
  },
  async anthropicHelper(base, options) {
    const stream = anthropic(base, options).messages.stream({ model: "claude-test-1", max_tokens: 64, messages: HI });
    const message = await stream.finalMessage();
    return { text: message.content.map((block) => block.text).join(""), finished: message.stop_reason !== null };
  },
  async gemini(base, options) {
    const httpOptions = options.timeout ? { timeout: options.timeout } : {};
    const stream = await gemini(base, httpOptions).models.generateContentStream({
      model: "gemini-2.5-flash",
      contents: "Hi",
    });
    let text = "";
    let finished = false;
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      finished ||= Boolean(chunk.candidates?.[0]?.finishReason);
    }
    return { text, finished };
  },
};

const PREFIX = { text: "First ", finished: false };
const WHOLE = { text: "First second.", finished: true };
const RETRIED = { text: "Next.", finished: true };
const terminated = { name: "TypeError", message: "terminated" };
const sdkTerminated = (name) => ({ name, message: "terminated", cause: "TypeError" });
const OPENAI_UNFINISHED = { name: "OpenAIError", message: "missing finish_reason for choice 0" };
const ANTHROPIC_UNFINISHED = {
  name: "AnthropicError",
  message: "stream ended without producing a Message with role=assistant",
};
const IN_PROGRESS = { text: "First ", finished: false, status: "in_progress" };
const badJson = { name: "SyntaxError", message: "Unexpected end of JSON input" };

// mode -> plan, client options, and per surface either the summary or {name, message[, cause]} thrown.
const CASES = {
  early_clean_end: {
    plan: { mode: "early_clean_end", after_content_frames: 1 },
    expect: {
      chat: PREFIX,
      chatHelper: OPENAI_UNFINISHED,
      responses: PREFIX,
      responsesHelper: IN_PROGRESS,
      anthropic: PREFIX,
      anthropicHelper: ANTHROPIC_UNFINISHED,
      gemini: PREFIX,
    },
  },
  delay_then_continue: {
    plan: { mode: "delay_then_continue", after_content_frames: 1, delay_ms: 100 },
    expect: Object.fromEntries(Object.keys(SURFACES).map((name) => [name, WHOLE])),
  },
  abort_connection: {
    plan: { mode: "abort_connection", after_content_frames: 1 },
    expect: {
      chat: terminated,
      chatHelper: sdkTerminated("OpenAIError"),
      responses: terminated,
      responsesHelper: sdkTerminated("OpenAIError"),
      anthropic: terminated,
      anthropicHelper: sdkTerminated("AnthropicError"),
      gemini: terminated,
    },
  },
  truncate_bytes: {
    plan: { mode: "truncate_bytes", after_content_frames: 1, cut_bytes: 10 },
    expect: {
      chat: PREFIX,
      chatHelper: OPENAI_UNFINISHED,
      responses: PREFIX,
      responsesHelper: IN_PROGRESS,
      anthropic: PREFIX,
      anthropicHelper: ANTHROPIC_UNFINISHED,
      gemini: { name: "Error", message: "Incomplete JSON segment at the end" },
    },
  },
  malformed_frame: {
    plan: { mode: "malformed_frame", after_content_frames: 1 },
    expect: {
      chat: badJson,
      chatHelper: { ...badJson, name: "OpenAIError", cause: "SyntaxError" },
      responses: badJson,
      responsesHelper: { ...badJson, name: "OpenAIError", cause: "SyntaxError" },
      anthropic: badJson,
      anthropicHelper: { ...badJson, name: "AnthropicError", cause: "SyntaxError" },
      gemini: badJson,
    },
  },
  stall: {
    plan: { mode: "stall", after_content_frames: 1, delay_ms: 300 },
    expect: {
      chat: PREFIX,
      chatHelper: OPENAI_UNFINISHED,
      responses: PREFIX,
      responsesHelper: IN_PROGRESS,
      anthropic: PREFIX,
      anthropicHelper: ANTHROPIC_UNFINISHED,
      gemini: PREFIX,
    },
  },
  // The openai and anthropic `timeout` covers the wait for the response headers only: a stream that
  // stalls after them is waited out. google-genai's `httpOptions.timeout` aborts the whole call.
  stall_with_short_timeout: {
    plan: { mode: "stall", after_content_frames: 1, delay_ms: 1500 },
    options: { timeout: 300 },
    only: ["chat", "anthropic", "gemini"],
    expect: {
      chat: PREFIX,
      anthropic: PREFIX,
      gemini: { name: "DOMException", message: "This operation was aborted" },
    },
  },
  slow_drip: {
    plan: { mode: "slow_drip", bytes_per_second: 20000 },
    expect: Object.fromEntries(Object.keys(SURFACES).map((name) => [name, WHOLE])),
  },
  // Connection faults: openai and anthropic retry (default maxRetries 2) and the retry gets the next
  // scripted answer; google-genai does not retry and leaks undici's TypeError("fetch failed").
  reset_before_headers: {
    plan: { mode: "reset_before_headers" },
    expect: {
      ...Object.fromEntries(Object.keys(SURFACES).map((name) => [name, RETRIED])),
      gemini: { name: "TypeError", message: "fetch failed", cause: "Error" },
    },
  },
  reset_before_headers_no_retries: {
    plan: { mode: "reset_before_headers" },
    options: { maxRetries: 0 },
    only: ["chat", "responses", "anthropic"],
    expect: {
      chat: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
      responses: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
      anthropic: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
    },
  },
  empty_response: {
    plan: { mode: "empty_response" },
    expect: {
      ...Object.fromEntries(Object.keys(SURFACES).map((name) => [name, RETRIED])),
      gemini: { name: "TypeError", message: "fetch failed", cause: "SocketError" },
    },
  },
  empty_response_no_retries: {
    plan: { mode: "empty_response" },
    options: { maxRetries: 0 },
    only: ["chat", "responses", "anthropic"],
    expect: {
      chat: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
      responses: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
      anthropic: { name: "APIConnectionError", message: "Connection error.", cause: "TypeError" },
    },
  },
  http_error_page: {
    plan: { mode: "http_error_page", status: 502 },
    expect: {
      ...Object.fromEntries(Object.keys(SURFACES).map((name) => [name, RETRIED])),
      gemini: { name: "ApiError", status: 502 },
    },
  },
  http_error_page_no_retries: {
    plan: { mode: "http_error_page", status: 502 },
    options: { maxRetries: 0 },
    only: ["chat", "responses", "anthropic"],
    expect: {
      chat: { name: "InternalServerError", status: 502 },
      responses: { name: "InternalServerError", status: 502 },
      anthropic: { name: "InternalServerError", status: 502 },
    },
  },
};

function thrown(error, expected) {
  const seen = { name: error?.constructor?.name };
  if ("message" in expected) seen.message = error.message;
  if ("cause" in expected) seen.cause = error.cause?.constructor?.name;
  if ("status" in expected) seen.status = error.status ?? error.code;
  return seen;
}

for (const [mode, { plan, options = {}, only, expect }] of Object.entries(CASES)) {
  describe(mode, () => {
    for (const surface of only ?? Object.keys(SURFACES)) {
      test(surface, async () => {
        const session = await faulted(plan);
        const expected = expect[surface];
        let seen;
        try {
          seen = await SURFACES[surface](session.provider_base, options);
        } catch (error) {
          assert.ok(!("text" in expected), `${surface} threw ${error?.constructor?.name}: ${error?.message}`);
          seen = thrown(error, expected);
        }
        assert.deepEqual(seen, expected);
        const attempts = await control.requests(session.id);
        // In-stream faults are never retried; a retried connection fault shows two attempts.
        assert.equal(attempts.length, expected === RETRIED ? 2 : 1);
        await control.deleteSession(session.id);
      });
    }
  });
}
