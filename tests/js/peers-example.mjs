// docs/javascript.md's MCP and A2A example, run by a2a.test.mjs against its own server (which also checks
// that the page shows this code). By hand: `LLMTS_URL=http://127.0.0.1:8080 node peers-example.mjs`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

import { Role } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.LLMTS_URL ?? "http://127.0.0.1:8080";
const json = { "content-type": "application/json" };

// 1. A session with one scripted MCP server and one scripted A2A agent.
const session = await (await fetch(`${url}/admin-api/sessions`, { method: "POST" })).json();
const select = { ...json, "x-llm-test-server-session": session.id };
const city = { type: "object", properties: { city: { type: "string" } } };
const configured = await fetch(`${url}/admin-api/configure`, {
  method: "POST",
  headers: select,
  body: JSON.stringify({
    mcp_servers: [
      {
        name: "weather",
        tools: [
          {
            name: "forecast",
            input_schema: city,
            results: [{ text: "Sunny, 21 C", when: { arguments: { city: "Paris" } } }],
          },
        ],
      },
    ],
    a2a_agents: [
      {
        name: "researcher",
        responses: [{ task: { artifacts: [{ name: "sources", text: "Paper A" }] } }], // submitted, working, completed
      },
    ],
  }),
});
assert.equal(configured.status, 200, await configured.text());
const base = session.provider_base; // carries the session: no header needed below

// 2. The official MCP client on the server's Streamable HTTP endpoint.
const mcp = new Client({ name: "my-agent", version: "1.0.0" });
await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/weather`)));
const forecast = await mcp.callTool({ name: "forecast", arguments: { city: "Paris" } });
assert.equal(forecast.content[0].text, "Sunny, 21 C");
await mcp.close();

// 3. The official A2A client: the card from the agent's base URL (with its trailing slash), then a task.
const a2a = await new ClientFactory().createFromUrl(`${base}/a2a/researcher/`);
const text = { $case: "text", value: "Sources on MCP?" };
const message = { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: text }] };
const events = [];
for await (const event of a2a.sendMessageStream({ message })) events.push(event.payload.$case);
assert.deepEqual(events, ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);

// 4. Both peers in the session's one journal, oldest first.
const journal = await (await fetch(`${url}/admin-api/requests?order=asc`, { headers: select })).json();
assert.deepEqual(
  journal.map((entry) => [entry.provider, entry.operation]),
  [
    ["mcp", "initialize"],
    ["mcp", "tools/call"],
    ["a2a", "agent_card"],
    ["a2a", "SendStreamingMessage"],
  ],
);
assert.deepEqual(journal[1].arguments, { city: "Paris" });

await fetch(`${url}/admin-api/sessions/${session.id}`, { method: "DELETE" });
console.log("ok");
