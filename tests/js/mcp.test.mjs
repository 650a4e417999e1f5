// A session's scripted MCP servers through the official TypeScript MCP client (@modelcontextprotocol/sdk:
// `Client` over `StreamableHTTPClientTransport`, once over the legacy `SSEClientTransport`) against a real
// llmts server (docs/mcp.md, docs/javascript.md). Run with `tox -e js` (or `npm test` with LLMTS_PYTHON).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { Control, startServer } from "./llmts.mjs";

const CITY = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const ANSWER = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

let server;
let control;
before(async () => {
  server = await startServer();
  control = new Control(server.url);
});
after(() => server?.stop());

/** A session whose configuration is these MCP servers; `mcp(name)` is a server's URL under `/sessions/{id}`. */
async function session(...servers) {
  const created = await control.session({ mcp_servers: servers });
  return { ...created, mcp: (name) => new URL(`${created.provider_base}/mcp/${name}`) };
}

/** Connect a `Client` over Streamable HTTP; closed when the test ends. */
async function connect(t, url, { requestInit, capabilities, listChanged } = {}) {
  const client = new Client({ name: "llmts-js-tests", version: "1.0.0" }, { capabilities, listChanged });
  const transport = new StreamableHTTPClientTransport(url, { requestInit });
  await client.connect(transport);
  t.after(() => client.close());
  return { client, transport };
}

const texts = (result) => result.content.map((block) => block.text);

/** What a rejected promise threw: `{name, code, message}` and `data` when there is one. */
async function thrown(promise) {
  try {
    await promise;
  } catch (error) {
    return {
      name: error.constructor.name,
      code: error.code,
      message: error.message,
      ...(error.data === undefined ? {} : { data: error.data }),
    };
  }
  assert.fail("expected a rejection");
}

test("initialize negotiates the newest revision and every page of tools/list is served", async (t) => {
  const s = await session({
    name: "files",
    instructions: "Search the team's files.",
    version: "2.1.0",
    page_size: 1,
    tools: [
      { name: "search", title: "Search", description: "Find files", input_schema: CITY, output_schema: ANSWER },
      { name: "open", annotations: { readOnlyHint: true } },
    ],
  });
  const { client, transport } = await connect(t, s.mcp("files"));
  assert.equal(LATEST_PROTOCOL_VERSION, "2025-11-25");
  assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
  assert.match(transport.sessionId, /^[0-9a-f]{32}$/);
  assert.deepEqual(client.getServerVersion(), { name: "files", version: "2.1.0" });
  assert.equal(client.getInstructions(), "Search the team's files.");
  const capabilities = client.getServerCapabilities();
  assert.equal(capabilities.tools.listChanged, true);
  assert.equal(capabilities.resources.subscribe, true);

  // The client does not follow nextCursor itself: each page is one listTools call.
  const first = await client.listTools();
  assert.deepEqual(
    first.tools.map((tool) => tool.name),
    ["search"],
  );
  assert.equal(typeof first.nextCursor, "string");
  assert.deepEqual(first.tools[0].inputSchema, CITY);
  assert.deepEqual(first.tools[0].outputSchema, ANSWER);
  assert.equal(first.tools[0].title, "Search");
  const second = await client.listTools({ cursor: first.nextCursor });
  assert.deepEqual(
    second.tools.map((tool) => tool.name),
    ["open"],
  );
  assert.equal(second.nextCursor, undefined);
  assert.deepEqual(second.tools[0].annotations, { readOnlyHint: true });
  await client.ping();

  const journal = await control.requests(s.id, "provider=mcp&order=asc");
  assert.deepEqual(
    journal.map((entry) => [entry.operation, entry.mcp_server]),
    [
      ["initialize", "files"],
      ["tools/list", "files"],
      ["tools/list", "files"],
      ["ping", "files"],
    ],
  );
});

test("the X-Llm-Test-Server-Session header selects the session at the server root", async (t) => {
  const s = await session({ name: "echo", tools: [{ name: "say", results: [{ text: "said" }] }] });
  const requestInit = { headers: { "X-Llm-Test-Server-Session": s.id } };
  const { client } = await connect(t, new URL(`${server.url}/mcp/echo`), { requestInit });
  assert.deepEqual(texts(await client.callTool({ name: "say", arguments: {} })), ["said"]);
  const [call] = await control.requests(s.id, "provider=mcp&operation=tools/call");
  assert.equal(call.tool_name, "say");
});

test("tools/call answers the scripted results in order: when.arguments, structured, isError, errors", async (t) => {
  const s = await session({
    name: "s",
    tools: [
      {
        name: "weather",
        input_schema: CITY,
        results: [{ text: "rain", when: { arguments: { city: "London" } } }, { text: "sun" }, { text: "snow" }],
      },
      {
        name: "ask",
        output_schema: ANSWER,
        results: [
          { structured: { answer: "42" } },
          { text: "bad input", is_error: true },
          { text: "wrong shape", structured: { answer: 42 } },
        ],
      },
      {
        name: "media",
        results: [
          {
            content: [
              { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
              { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
              { type: "resource", resource: { uri: "file:///b.txt", text: "bee" } },
            ],
          },
          { error: { code: -32602, message: "no such city", data: { city: "Atlantis" } } },
        ],
      },
    ],
  });
  const { client } = await connect(t, s.mcp("s"));
  await client.listTools(); // the client checks structuredContent against the output schemas it listed

  // Each call takes the first unconsumed result whose `when` matches: Paris skips the London-only one.
  const weather = (city, extra = {}) => client.callTool({ name: "weather", arguments: { city, ...extra } });
  assert.deepEqual(texts(await weather("Paris")), ["sun"]);
  assert.deepEqual(texts(await weather("London", { unit: "C" })), ["rain"]);
  assert.deepEqual(texts(await weather("London")), ["snow"]);
  const exhausted = await thrown(weather("Rome"));
  assert.equal(exhausted.name, "McpError");
  assert.equal(exhausted.code, ErrorCode.InternalError);
  assert.match(exhausted.message, /^MCP error -32603: .*no scripted result left/);
  assert.equal(exhausted.data.code, "llm_test_server_tool_exhausted");

  const answered = await client.callTool({ name: "ask", arguments: {} });
  assert.deepEqual(answered.structuredContent, { answer: "42" });
  assert.deepEqual(texts(answered), ['{"answer":"42"}']); // structured alone: its JSON is the text too
  const failed = await client.callTool({ name: "ask", arguments: {} });
  assert.equal(failed.isError, true);
  assert.deepEqual(texts(failed), ["bad input"]);
  // The TypeScript client validates structuredContent itself and raises McpError -32602.
  const wrongShape = await thrown(client.callTool({ name: "ask", arguments: {} }));
  assert.equal(wrongShape.name, "McpError");
  assert.equal(wrongShape.code, ErrorCode.InvalidParams);
  assert.match(wrongShape.message, /Structured content does not match the tool's output schema/);

  const media = await client.callTool({ name: "media", arguments: {} });
  assert.deepEqual(
    media.content.map((block) => block.type),
    ["image", "resource_link", "resource"],
  );
  assert.equal(media.content[2].resource.text, "bee");
  const error = await thrown(client.callTool({ name: "media", arguments: {} }));
  assert.deepEqual(error, {
    name: "McpError",
    code: ErrorCode.InvalidParams,
    message: "MCP error -32602: no such city",
    data: { city: "Atlantis" },
  });

  const calls = await control.requests(s.id, "provider=mcp&operation=tools/call&order=asc");
  assert.deepEqual(
    calls.map((entry) => [entry.provider, entry.operation, entry.mcp_server, entry.tool_name, entry.arguments]),
    [
      ["mcp", "tools/call", "s", "weather", { city: "Paris" }],
      ["mcp", "tools/call", "s", "weather", { city: "London", unit: "C" }],
      ["mcp", "tools/call", "s", "weather", { city: "London" }],
      ["mcp", "tools/call", "s", "weather", { city: "Rome" }],
      ["mcp", "tools/call", "s", "ask", {}],
      ["mcp", "tools/call", "s", "ask", {}],
      ["mcp", "tools/call", "s", "ask", {}],
      ["mcp", "tools/call", "s", "media", {}],
      ["mcp", "tools/call", "s", "media", {}],
    ],
  );
  assert.deepEqual(
    calls.map((entry) => entry.success),
    [true, true, true, false, true, true, true, true, false],
  );
  assert.equal(calls[3].error_code, "jsonrpc_-32603");
  assert.equal(calls[8].error_code, "jsonrpc_-32602");
});

test("progress notifications reach onprogress before the result", async (t) => {
  const progress = [{ progress: 1, total: 2, message: "half" }, { progress: 2, total: 2 }];
  const s = await session({ name: "s", tools: [{ name: "slow", results: [{ text: "done", progress }] }] });
  const { client } = await connect(t, s.mcp("s"));
  const seen = [];
  const result = await client.callTool({ name: "slow", arguments: {} }, undefined, {
    onprogress: (update) => seen.push(update),
  });
  assert.deepEqual(texts(result), ["done"]);
  assert.deepEqual(seen, [{ progress: 1, total: 2, message: "half" }, { progress: 2, total: 2 }]);
  const [call] = await control.requests(s.id, "provider=mcp&operation=tools/call");
  assert.equal(call.streaming, true);
});

test("an elicitation is answered by the ElicitRequestSchema handler and journaled", async (t) => {
  const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
  const s = await session({
    name: "desk",
    tools: [
      {
        name: "book",
        results: [
          { text: "Booked for Ada.", elicit: { message: "Who is travelling?", requested_schema: schema } },
          { text: "never sent", elicit: { message: "Again?" } },
        ],
      },
    ],
  });
  const { client } = await connect(t, s.mcp("desk"), { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: "accept", content: { name: "Ada" } };
  });
  assert.deepEqual(texts(await client.callTool({ name: "book", arguments: {} })), ["Booked for Ada."]);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].message, "Who is travelling?");
  assert.deepEqual(asked[0].requestedSchema, schema);
  const [call] = await control.requests(s.id, "provider=mcp&operation=tools/call");
  assert.equal(call.client_answers.length, 1);
  assert.equal(call.client_answers[0].method, "elicitation/create");
  assert.match(String(call.client_answers[0].id), /^llmts-\d+$/);
  assert.deepEqual(call.client_answers[0].result, { action: "accept", content: { name: "Ada" } });

  // A client that did not declare the capability gets -32021.
  const { client: bare } = await connect(t, s.mcp("desk"));
  const refused = await thrown(bare.callTool({ name: "book", arguments: {} }));
  assert.equal(refused.name, "McpError");
  assert.equal(refused.code, -32021);
  assert.deepEqual(refused.data.requiredCapabilities, { elicitation: {} });
});

test("resources, templates, subscriptions and prompts", async (t) => {
  const notes = { uri: "file:///notes.txt", name: "notes", mime_type: "text/plain", text: "milk" };
  const logo = { uri: "file:///logo.png", name: "logo", mime_type: "image/png", blob: "iVBORw0KGgo=" };
  const files = {
    name: "files",
    resources: [notes, logo],
    resource_templates: [{ uri_template: "file:///{path}", name: "files", mime_type: "text/plain" }],
    prompts: [
      {
        name: "summarize",
        description: "Summaries",
        arguments: [{ name: "topic", required: true }],
        messages: [{ role: "user", text: "Summarize {topic}." }],
      },
    ],
  };
  const s = await session(files);
  const { client } = await connect(t, s.mcp("files"));
  const updated = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => updated.push(notification.params));

  const { resources } = await client.listResources();
  assert.deepEqual(
    resources.map((r) => [r.uri, r.name, r.mimeType]),
    [
      ["file:///notes.txt", "notes", "text/plain"],
      ["file:///logo.png", "logo", "image/png"],
    ],
  );
  const { resourceTemplates } = await client.listResourceTemplates();
  assert.deepEqual(resourceTemplates, [{ uriTemplate: "file:///{path}", name: "files", mimeType: "text/plain" }]);
  const read = await client.readResource({ uri: "file:///notes.txt" });
  assert.deepEqual(read.contents, [{ uri: "file:///notes.txt", mimeType: "text/plain", text: "milk" }]);
  const blob = await client.readResource({ uri: "file:///logo.png" });
  assert.equal(blob.contents[0].blob, "iVBORw0KGgo=");
  const unknown = await thrown(client.readResource({ uri: "file:///nope" }));
  assert.equal(unknown.code, -32002);

  const { prompts } = await client.listPrompts();
  assert.equal(prompts[0].name, "summarize");
  assert.deepEqual(prompts[0].arguments, [{ name: "topic", required: true }]);
  const prompt = await client.getPrompt({ name: "summarize", arguments: { topic: "MCP" } });
  assert.deepEqual(prompt.messages, [{ role: "user", content: { type: "text", text: "Summarize MCP." } }]);
  const missing = await thrown(client.getPrompt({ name: "summarize", arguments: {} }));
  assert.equal(missing.code, ErrorCode.InvalidParams);

  // A configure that changes a subscribed resource reaches the client on its GET stream.
  await client.subscribeResource({ uri: "file:///notes.txt" });
  await control.call("POST", "/admin-api/configure", {
    session: s.id,
    body: { mcp_servers: [{ ...files, resources: [{ ...notes, text: "eggs" }, logo] }] },
  });
  await waitFor(() => updated.length > 0);
  assert.deepEqual(updated, [{ uri: "file:///notes.txt" }]);
  assert.equal((await client.readResource({ uri: "file:///notes.txt" })).contents[0].text, "eggs");
  await client.unsubscribeResource({ uri: "file:///notes.txt" });
});

async function waitFor(condition, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("a stream cut short: the call waits for its timeout (no reconnection without event ids)", async (t) => {
  const progress = [{ progress: 1, total: 2 }];
  const s = await session({
    name: "s",
    tools: [
      {
        name: "cut",
        results: [
          { text: "lost", progress, stream_delivery: { mode: "early_clean_end", after_content_frames: 2 } },
          { text: "lost", progress, stream_delivery: { mode: "abort_connection", after_content_frames: 2 } },
          { text: "whole" },
        ],
      },
    ],
  });
  const { client } = await connect(t, s.mcp("s"));
  const errors = [];
  client.onerror = (error) => errors.push(error.message);
  for (const mode of ["early_clean_end", "abort_connection"]) {
    const seen = [];
    const started = Date.now();
    const outcome = await thrown(
      client.callTool({ name: "cut", arguments: {} }, undefined, { timeout: 1500, onprogress: (p) => seen.push(p) }),
    );
    assert.deepEqual(seen, [{ progress: 1, total: 2 }], mode);
    assert.deepEqual(outcome, {
      name: "McpError",
      code: ErrorCode.RequestTimeout,
      message: "MCP error -32001: Request timed out",
      data: { timeout: 1500 },
    });
    assert.ok(Date.now() - started >= 1400, mode);
  }
  console.log(errors);
  // The client goes on: the next call gets the next result.
  assert.deepEqual(texts(await client.callTool({ name: "cut", arguments: {} })), ["whole"]);
  const calls = await control.requests(s.id, "provider=mcp&operation=tools/call&order=asc");
  console.log(calls.map((c) => [c.success, c.transport_outcome, c.stream_delivery_applied, c.emitted_content_frames]));
});

test("session_expired: 404 for the call and every later request, and the client does not re-initialize", async (t) => {
  const s = await session({
    name: "s",
    tools: [{ name: "t", results: [{ text: "one" }, { text: "gone", fault: "session_expired" }, { text: "two" }] }],
  });
  const { client, transport } = await connect(t, s.mcp("s"));
  assert.deepEqual(texts(await client.callTool({ name: "t", arguments: {} })), ["one"]);
  const expired = await thrown(client.callTool({ name: "t", arguments: {} }));
  console.log(expired);
  const later = await thrown(client.callTool({ name: "t", arguments: {} }));
  console.log(later);
  const journal = await control.requests(s.id, "provider=mcp&order=asc");
  console.log(journal.map((e) => [e.operation, e.status, e.error_code]));
});

test("the legacy HTTP+SSE transport at /mcp/{name}/sse", async (t) => {
  const s = await session({
    name: "old",
    tools: [{ name: "book", results: [{ text: "Booked.", elicit: { message: "Name?" } }] }],
  });
  const client = new Client({ name: "llmts-js-tests", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));
  const transport = new SSEClientTransport(new URL(`${s.mcp("old")}/sse`));
  await client.connect(transport);
  t.after(() => client.close());
  assert.deepEqual(
    (await client.listTools()).tools.map((tool) => tool.name),
    ["book"],
  );
  assert.deepEqual(texts(await client.callTool({ name: "book", arguments: {} })), ["Booked."]);
  const journal = await control.requests(s.id, "provider=mcp&order=asc");
  console.log(journal.map((e) => [e.operation, e.status, e.client_answers]));
});
