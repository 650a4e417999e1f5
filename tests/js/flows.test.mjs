// The main flows of the official JS/TS SDKs against a real llmts server (docs/javascript.md).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

import { Control, startServer } from "./llmts.mjs";

const MODELS = ["gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"];
const HI = [{ role: "user", content: "Hi" }];
const WEATHER = {
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const SLOW_DOWN = { error: { status: 429, code: "rate_limit_exceeded", message: "Slow down", retry_after: 1 } };

let server;
let control;
before(async () => {
  server = await startServer();
  control = new Control(server.url);
});
after(() => server?.stop());

const session = (responses) => control.session({ models: MODELS, scenarios: [{ responses }] });

test("the documented example runs", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["example.mjs"], {
    env: { ...process.env, LLMTS_URL: server.url },
  });
  assert.equal(stdout.trim(), "ok");
});

test("openai: chat, stream and a tool loop", async () => {
  const call = { id: "call_1", name: "get_weather", arguments: { city: "Paris" } };
  const s = await session([
    { text: "Hello." },
    { text: "Hi again.", chunks: ["Hi ", "again."] },
    { tool_calls: [call] },
    { text: "Sunny in Paris." },
  ]);
  const client = new OpenAI({ baseURL: `${s.provider_base}/openai/v1`, apiKey: "k" });
  const reply = await client.chat.completions.create({ model: "gpt-4.1-mini", messages: HI });
  assert.equal(reply.choices[0].message.content, "Hello.");
  const pieces = [];
  for await (const chunk of await client.chat.completions.create({ model: "gpt-4.1-mini", messages: HI, stream: true })) {
    if (chunk.choices[0]?.delta?.content) pieces.push(chunk.choices[0].delta.content);
  }
  assert.deepEqual(pieces, ["Hi ", "again."]);
  const tools = [{ type: "function", function: WEATHER }];
  const messages = [{ role: "user", content: "Weather in Paris?" }];
  const asked = (await client.chat.completions.create({ model: "gpt-4.1-mini", messages, tools })).choices[0].message;
  assert.equal(asked.tool_calls[0].function.name, "get_weather");
  assert.deepEqual(JSON.parse(asked.tool_calls[0].function.arguments), { city: "Paris" });
  messages.push(asked, { role: "tool", tool_call_id: asked.tool_calls[0].id, content: "Sunny" });
  const final = await client.chat.completions.create({ model: "gpt-4.1-mini", messages, tools });
  assert.equal(final.choices[0].message.content, "Sunny in Paris.");
});

test("openai: Responses with a JSON schema", async () => {
  const s = await session([{ json: { city: "Paris", celsius: 21 } }]);
  const client = new OpenAI({ baseURL: `${s.provider_base}/openai/v1`, apiKey: "k" });
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, celsius: { type: "integer" } },
    required: ["city", "celsius"],
    additionalProperties: false,
  };
  const response = await client.responses.create({
    model: "gpt-4.1-mini",
    input: "Weather?",
    text: { format: { type: "json_schema", name: "weather", schema, strict: true } },
  });
  assert.deepEqual(JSON.parse(response.output_text), { city: "Paris", celsius: 21 });
});

test("anthropic: messages, stream helper and a tool loop", async () => {
  const call = { id: "toolu_1", name: "get_weather", arguments: { city: "Paris" } };
  const s = await session([{ text: "Hello." }, { tool_calls: [call] }, { text: "Sunny in Paris." }]);
  const client = new Anthropic({ baseURL: `${s.provider_base}/anthropic`, apiKey: "k" });
  const reply = await client.messages.create({ model: "claude-test-1", max_tokens: 64, messages: HI });
  assert.equal(reply.content[0].text, "Hello.");
  const tools = [{ name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters }];
  const messages = [{ role: "user", content: "Weather in Paris?" }];
  const asked = await client.messages.stream({ model: "claude-test-1", max_tokens: 64, messages, tools }).finalMessage();
  assert.equal(asked.stop_reason, "tool_use");
  const use = asked.content.find((block) => block.type === "tool_use");
  assert.deepEqual([use.name, use.input], ["get_weather", { city: "Paris" }]);
  messages.push(
    { role: "assistant", content: asked.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "Sunny" }] },
  );
  const final = await client.messages.create({ model: "claude-test-1", max_tokens: 64, messages, tools });
  assert.equal(final.content[0].text, "Sunny in Paris.");
});

test("gemini: generate, stream and a function call", async () => {
  const call = { id: "call_1", name: "get_weather", arguments: { city: "Paris" } };
  const s = await session([{ text: "Hello." }, { text: "Hi again.", chunks: ["Hi ", "again."] }, { tool_calls: [call] }]);
  const client = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: `${s.provider_base}/gemini` } });
  assert.equal((await client.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" })).text, "Hello.");
  const pieces = [];
  for await (const chunk of await client.models.generateContentStream({ model: "gemini-2.5-flash", contents: "Hi" })) {
    if (chunk.text) pieces.push(chunk.text);
  }
  assert.deepEqual(pieces, ["Hi ", "again."]);
  const asked = await client.models.generateContent({
    model: "gemini-2.5-flash",
    contents: "Weather in Paris?",
    config: { tools: [{ functionDeclarations: [WEATHER] }] },
  });
  assert.deepEqual(
    asked.functionCalls.map((c) => [c.name, c.args]),
    [["get_weather", { city: "Paris" }]],
  );
});

async function retried(s) {
  const [first, second] = await control.requests(s.id);
  assert.deepEqual([first.status, second.status], [429, 200]);
  return second.started_monotonic_seconds - first.started_monotonic_seconds;
}

test("openai and anthropic retry a 429 after its Retry-After", async () => {
  const s1 = await session([SLOW_DOWN, { text: "Done." }]);
  const openai = new OpenAI({ baseURL: `${s1.provider_base}/openai/v1`, apiKey: "k" });
  assert.equal((await openai.chat.completions.create({ model: "gpt-4.1-mini", messages: HI })).choices[0].message.content, "Done.");
  assert.ok((await retried(s1)) >= 0.9);
  const s2 = await session([SLOW_DOWN, { text: "Done." }]);
  const anthropic = new Anthropic({ baseURL: `${s2.provider_base}/anthropic`, apiKey: "k" });
  assert.equal((await anthropic.messages.create({ model: "claude-test-1", max_tokens: 64, messages: HI })).content[0].text, "Done.");
  assert.ok((await retried(s2)) >= 0.9);
});

test("google-genai does not retry a 429 unless retryOptions is set", async () => {
  const s = await session([SLOW_DOWN, { text: "Done." }]);
  const plain = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: `${s.provider_base}/gemini` } });
  await assert.rejects(plain.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" }), (error) => {
    assert.equal(error.constructor.name, "ApiError");
    assert.equal(error.status, 429);
    return true;
  });
  const again = await session([SLOW_DOWN, { text: "Done." }]);
  const retrying = new GoogleGenAI({
    apiKey: "k",
    httpOptions: { baseUrl: `${again.provider_base}/gemini`, retryOptions: { attempts: 3 } },
  });
  assert.equal((await retrying.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" })).text, "Done.");
  assert.ok((await retried(again)) > 0);
});

test("clients built with no arguments read the base URLs and keys from the environment", async () => {
  const s = await control.session({
    models: MODELS,
    scenarios: [{ terminal_policy: "repeat_last_response", responses: [{ text: "Env." }] }],
  });
  const variables = {
    OPENAI_BASE_URL: `${s.provider_base}/openai/v1`,
    OPENAI_API_KEY: "k",
    ANTHROPIC_BASE_URL: `${s.provider_base}/anthropic`,
    ANTHROPIC_API_KEY: "k",
    GOOGLE_GEMINI_BASE_URL: `${s.provider_base}/gemini`,
    GEMINI_API_KEY: "k",
  };
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  try {
    const openai = await new OpenAI().chat.completions.create({ model: "gpt-4.1-mini", messages: HI });
    assert.equal(openai.choices[0].message.content, "Env.");
    const anthropic = await new Anthropic().messages.create({ model: "claude-test-1", max_tokens: 8, messages: HI });
    assert.equal(anthropic.content[0].text, "Env.");
    const gemini = await new GoogleGenAI({}).models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
    assert.equal(gemini.text, "Env.");
    const providers = (await control.requests(s.id)).map((entry) => entry.provider);
    assert.deepEqual(providers, ["openai", "anthropic", "gemini"]);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});
