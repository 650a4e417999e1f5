// docs/javascript.md's realtime example, run by realtime.test.mjs against a TLS server it trusts. By hand:
// `llmts serve --tls --tls-dir .tls --port 8443`, then `NODE_EXTRA_CA_CERTS=.tls/cert.pem
// LLMTS_URL=https://127.0.0.1:8443 node --experimental-websocket realtime-example.mjs`.
import assert from "node:assert/strict";

import OpenAI from "openai";
import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";

const url = process.env.LLMTS_URL ?? "https://127.0.0.1:8443";

// 1. A session whose realtime turns are scripted ("operation": "realtime").
const session = await (await fetch(`${url}/admin-api/sessions`, { method: "POST" })).json();
const configured = await fetch(`${url}/admin-api/configure`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-llm-test-server-session": session.id },
  body: JSON.stringify({
    scenarios: [{ operation: "realtime", responses: [{ text: "Hello there.", chunks: ["Hello", " there."] }] }],
  }),
});
assert.equal(configured.status, 200, await configured.text());

// 2. The SDK's realtime client dials wss://<provider base>/openai/v1/realtime?model=... (always wss).
const client = new OpenAI({ baseURL: `${session.provider_base}/openai/v1`, apiKey: "sk-test" });
const rt = new OpenAIRealtimeWebSocket({ model: "gpt-realtime" }, client);
const deltas = [];
rt.on("response.output_text.delta", (event) => deltas.push(event.delta));
const done = await new Promise((resolve, reject) => {
  rt.on("error", reject);
  rt.on("response.done", resolve);
  rt.on("session.created", () => {
    rt.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text: "Hi" }] },
    });
    rt.send({ type: "response.create", response: { output_modalities: ["text"] } });
  });
});
rt.close();
assert.deepEqual(deltas, ["Hello", " there."]);
assert.equal(done.response.status, "completed");

// 3. One journal entry per answered turn, with the client events that led to it.
const headers = { "x-llm-test-server-session": session.id };
const [turn] = await (await fetch(`${url}/admin-api/requests?operation=realtime`, { headers })).json();
assert.deepEqual(
  turn.client_events.map((event) => event.type),
  ["conversation.item.create", "response.create"],
);

await fetch(`${url}/admin-api/sessions/${session.id}`, { method: "DELETE" });
console.log("ok");
