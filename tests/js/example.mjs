// The runnable example of docs/javascript.md: a session from the control API, scripted answers, the three
// official SDKs pointed at it, and the journal read back. Usage: LLMTS_URL=http://127.0.0.1:8080 node example.mjs
import assert from "node:assert/strict";

import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const url = process.env.LLMTS_URL ?? "http://127.0.0.1:8080";
const json = { "content-type": "application/json" };

// 1. A fresh session: its own configuration, queues and journal.
const session = await (await fetch(`${url}/admin-api/sessions`, { method: "POST" })).json();
const select = { ...json, "x-llm-test-server-session": session.id };

// 2. Script it: one scenario, answers consumed in order, whichever SDK asks.
const configured = await fetch(`${url}/admin-api/configure`, {
  method: "POST",
  headers: select,
  body: JSON.stringify({
    models: ["gpt-4.1-mini", "claude-sonnet-4-6", "gemini-2.5-flash"],
    scenarios: [
      {
        responses: [
          { text: "Hello from OpenAI." },
          { text: "Hello from Claude.", chunks: ["Hello ", "from ", "Claude."] },
          { text: "Hello from Gemini." },
        ],
      },
    ],
  }),
});
assert.equal(configured.status, 200, await configured.text());

// 3. The official SDKs, each pointed at the session's provider base.
const base = session.provider_base;
const openai = new OpenAI({ baseURL: `${base}/openai/v1`, apiKey: "sk-test" });
const completion = await openai.chat.completions.create({
  model: "gpt-4.1-mini",
  messages: [{ role: "user", content: "Hi" }],
});
assert.equal(completion.choices[0].message.content, "Hello from OpenAI.");

const anthropic = new Anthropic({ baseURL: `${base}/anthropic`, apiKey: "sk-test" });
const stream = anthropic.messages.stream({
  model: "claude-sonnet-4-6",
  max_tokens: 256,
  messages: [{ role: "user", content: "Hi" }],
});
const deltas = [];
stream.on("text", (text) => deltas.push(text));
const message = await stream.finalMessage();
assert.deepEqual(deltas, ["Hello ", "from ", "Claude."]);
assert.equal(message.stop_reason, "end_turn");

const gemini = new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: `${base}/gemini` } });
const reply = await gemini.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" });
assert.equal(reply.text, "Hello from Gemini.");

// 4. What the server saw, oldest first.
const journal = await (await fetch(`${url}/admin-api/requests?order=asc`, { headers: select })).json();
assert.deepEqual(
  journal.map((entry) => [entry.provider, entry.streaming, entry.status]),
  [
    ["openai", false, 200],
    ["anthropic", true, 200],
    ["gemini", false, 200],
  ],
);

await fetch(`${url}/admin-api/sessions/${session.id}`, { method: "DELETE" });
console.log("ok");
