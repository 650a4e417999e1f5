// A session's scripted A2A agents through the official JavaScript A2A client (@a2a-js/sdk: `ClientFactory`
// over its JSON-RPC transport, the 1.0 wire, and once its v0.3 compat transport) against a real llmts
// server (docs/a2a.md, docs/javascript.md). Run with `tox -e js` (or `npm test` with LLMTS_PYTHON).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { Role, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

import { Control, startServer } from "./llmts.mjs";

const REPORT = {
  states: ["submitted", "working", "completed"],
  artifacts: [
    { name: "sources", text: "Paper A" },
    { name: "numbers", data: { k: 2 } },
  ],
  message: "Done.",
};

let server;
let control;
before(async () => {
  server = await startServer();
  control = new Control(server.url);
});
after(() => server?.stop());

/** A session with these agents; `a2a(name)` is an agent's base URL under `/sessions/{id}`. */
async function session(...agents) {
  const created = await control.session({ a2a_agents: agents });
  return { ...created, a2a: (name) => `${created.provider_base}/a2a/${name}` };
}

// The card resolver joins `.well-known/agent-card.json` to the base URL as a relative URL, so the agent's
// base URL needs its trailing slash (without it the card path replaces the agent's name: see the first test).
const connect = (base, options = undefined) => new ClientFactory(options).createFromUrl(`${base}/`);

const ask = (text, fields = {}) => ({
  message: {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text } }],
    ...fields,
  },
});

const state = (value) => TaskState[value].replace("TASK_STATE_", "");
const partText = (part) => part.content.value; // a text part's string, a data part's object

/** Each event of a stream as `[kind, detail]`, the task's id, and what the iteration threw, if anything. */
async function collect(events) {
  const seen = [];
  let taskId;
  try {
    for await (const { payload } of events) {
      const value = payload.value;
      taskId ??= payload.$case === "task" ? value.id : value.taskId;
      if (payload.$case === "task") seen.push(["task", state(value.status.state)]);
      else if (payload.$case === "statusUpdate") seen.push(["status", state(value.status.state)]);
      else if (payload.$case === "artifactUpdate") seen.push(["artifact", value.artifact.name]);
      else seen.push(["message", value.parts.map(partText).join("")]);
    }
  } catch (error) {
    return { seen, taskId, error };
  }
  return { seen, taskId };
}

async function thrown(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

test("the card resolves from the agent's base URL and the client picks the 1.0 wire", async () => {
  const s = await session({
    name: "researcher",
    description: "Finds sources",
    skills: [{ id: "search", name: "Search", tags: ["web"] }],
    responses: [{ text: "Hello." }],
  });
  const client = await connect(s.a2a("researcher"));
  assert.equal(client.protocolVersion, "1.0");
  const card = await client.getAgentCard();
  assert.equal(card.name, "researcher");
  assert.equal(card.description, "Finds sources");
  assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: false });
  assert.deepEqual(
    card.skills.map((skill) => [skill.id, skill.name, skill.tags]),
    [["search", "Search", ["web"]]],
  );
  assert.deepEqual(
    card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]),
    [
      [s.a2a("researcher"), "JSONRPC", "1.0"],
      [s.a2a("researcher"), "JSONRPC", "0.3"],
    ],
  );
  // The full card URL with an empty path works too; the base URL without its trailing slash does not.
  const byCardUrl = await new ClientFactory().createFromUrl(`${s.a2a("researcher")}/.well-known/agent-card.json`, "");
  assert.equal((await byCardUrl.getAgentCard()).name, "researcher");
  const noSlash = await thrown(new ClientFactory().createFromUrl(s.a2a("researcher")));
  assert.equal(
    noSlash.message,
    `Failed to fetch Agent Card from ${s.provider_base}/a2a/.well-known/agent-card.json: 404`,
  );

  const reply = await client.sendMessage(ask("Hi"));
  assert.equal(reply.role, Role.ROLE_AGENT);
  assert.deepEqual(reply.parts.map(partText), ["Hello."]);
  assert.match(reply.contextId, /^ctx-/);
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => [entry.provider, entry.operation, entry.a2a_agent, entry.status]),
    [
      ["a2a", "agent_card", "researcher", 200],
      ["a2a", "agent_card", "researcher", 200],
      ["a2a", "SendMessage", "researcher", 200],
    ],
  );
  assert.equal(journal[2].response_index, 0);
});

test("the X-Llm-Test-Server-Session header selects the session at the server root", async () => {
  const s = await session({ name: "helper", responses: [{ text: "Selected by header." }] });
  // The card fetch and every JSON-RPC call go through this fetch; the card's URLs are then at the root.
  const fetchImpl = (url, init = {}) =>
    fetch(url, { ...init, headers: { ...init.headers, "X-Llm-Test-Server-Session": s.id } });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  const client = await connect(`${server.url}/a2a/helper`, options);
  assert.equal((await client.getAgentCard()).supportedInterfaces[0].url, `${server.url}/a2a/helper`);
  assert.deepEqual((await client.sendMessage(ask("Hi"))).parts.map(partText), ["Selected by header."]);
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => entry.operation),
    ["agent_card", "SendMessage"],
  );
});

test("sendMessage: a task arrives in its last state with its artifacts; polling returns it as it started", async () => {
  const s = await session({ name: "r", responses: [{ task: REPORT }, { task: REPORT }] });
  const client = await connect(s.a2a("r"));
  const task = await client.sendMessage(ask("Report please"));
  assert.match(task.id, /^task-/);
  assert.equal(state(task.status.state), "COMPLETED");
  assert.deepEqual(task.status.message.parts.map(partText), ["Done."]);
  assert.deepEqual(
    task.artifacts.map((artifact) => [artifact.artifactId, artifact.name, artifact.parts.map(partText)]),
    [
      ["artifact-1", "sources", ["Paper A"]],
      ["artifact-2", "numbers", [{ k: 2 }]],
    ],
  );
  assert.deepEqual(task.history.map((message) => message.parts.map(partText)), [["Report please"]]);

  const polling = await connect(s.a2a("r"), { ...ClientFactoryOptions.default, clientConfig: { polling: true } });
  const started = await polling.sendMessage(ask("Again"));
  assert.equal(state(started.status.state), "SUBMITTED");
  assert.deepEqual(started.artifacts, []);
  const now = await polling.getTask({ id: started.id });
  assert.equal(state(now.status.state), "COMPLETED");
  assert.equal(now.artifacts.length, 2);
  const [, , , sent] = await control.requests(s.id, "provider=a2a&order=asc");
  assert.equal(sent.operation, "SendMessage");
  assert.equal(JSON.parse(sent.request_preview).params.configuration.returnImmediately, true);
});

test("sendMessageStream: a task moves through its states with artifacts; getTask, listTasks read it", async () => {
  const s = await session({ name: "r", responses: [{ task: REPORT }] });
  const client = await connect(s.a2a("r"));
  const contextId = `ctx-${randomUUID()}`;
  let taskId;
  const events = [];
  for await (const { payload } of client.sendMessageStream(ask("Sources?", { contextId }))) {
    events.push(payload);
    taskId ??= payload.value.id;
  }
  assert.deepEqual(
    events.map((payload) => payload.$case),
    ["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"],
  );
  const [first, working, sources, numbers, last] = events.map((payload) => payload.value);
  assert.equal(state(first.status.state), "SUBMITTED");
  assert.equal(first.contextId, contextId);
  assert.equal(state(working.status.state), "WORKING");
  assert.deepEqual(
    [sources.taskId, sources.artifact.name, sources.artifact.parts.map(partText)],
    [taskId, "sources", ["Paper A"]],
  );
  assert.deepEqual(numbers.artifact.parts.map(partText), [{ k: 2 }]);
  assert.equal(state(last.status.state), "COMPLETED");
  assert.deepEqual(last.status.message.parts.map(partText), ["Done."]);

  // A finished task cannot be subscribed to: -32004 as the stream's one event, the error's cause.
  const { seen, error } = await collect(client.resubscribeTask({ id: taskId }));
  assert.deepEqual(seen, []);
  assert.match(error.message, /^SSE event contained an error: .* \(Code: -32004\)/);
  assert.equal(error.cause.name, "UnsupportedOperationError");

  const task = await client.getTask({ id: taskId, historyLength: 1 });
  assert.equal(state(task.status.state), "COMPLETED");
  assert.equal(task.artifacts.length, 2);
  const listed = await client.listTasks({
    tenant: "",
    contextId,
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: "",
    includeArtifacts: true,
  });
  assert.deepEqual(
    listed.tasks.map((t) => [t.id, t.artifacts.length]),
    [[taskId, 2]],
  );
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => [entry.operation, entry.streaming, entry.success]),
    [
      ["agent_card", false, true],
      ["SendStreamingMessage", true, true],
      ["SubscribeToTask", true, false],
      ["GetTask", false, true],
      ["ListTasks", false, true],
    ],
  );
});

test("cancelTask, resubscribeTask, a continued task and push-notification configs", async () => {
  const s = await session({
    name: "r",
    push_notifications: true,
    responses: [
      { task: { states: ["submitted", "working"] } },
      { task: { states: ["submitted", "input-required"], message: "Which year?" } },
      { task: { states: ["working", "completed"], artifacts: [{ name: "answer", text: "1969" }] } },
    ],
  });
  const client = await connect(s.a2a("r"));
  const working = await client.sendMessage(ask("Work"));
  assert.equal(state(working.status.state), "WORKING");
  // A task left working: subscribing gets the task as it is, then the stream ends.
  assert.deepEqual((await collect(client.resubscribeTask({ id: working.id }))).seen, [["task", "WORKING"]]);

  const config = { tenant: "", id: "hook-1", taskId: working.id, url: "https://hooks.example/a2a", token: "t0k" };
  const created = await client.createTaskPushNotificationConfig(config);
  assert.deepEqual([created.id, created.taskId, created.url, created.token], ["hook-1", working.id, config.url, "t0k"]);
  const got = await client.getTaskPushNotificationConfig({ tenant: "", taskId: working.id, id: "hook-1" });
  assert.equal(got.url, config.url);
  const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: working.id, pageToken: "" });
  assert.deepEqual(
    listed.configs.map((c) => c.id),
    ["hook-1"],
  );
  await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: working.id, id: "hook-1" });

  const canceled = await client.cancelTask({ id: working.id });
  assert.equal(state(canceled.status.state), "CANCELED");
  const again = await thrown(client.cancelTask({ id: working.id }));
  assert.equal(again.name, "TaskNotCancelableError");
  assert.equal(again.envelopeCode, -32002);
  const unknown = await thrown(client.getTask({ id: "task-unknown" }));
  assert.equal(unknown.name, "TaskNotFoundError");
  assert.equal(unknown.envelopeCode, -32001);

  // An input-required task continues with the next response: same task, same context.
  const asked = await client.sendMessage(ask("When?"));
  assert.equal(state(asked.status.state), "INPUT_REQUIRED");
  assert.deepEqual(asked.status.message.parts.map(partText), ["Which year?"]);
  const continued = await collect(
    client.sendMessageStream(ask("The moon landing", { taskId: asked.id, contextId: asked.contextId })),
  );
  assert.deepEqual(continued.seen, [
    ["task", "WORKING"],
    ["artifact", "answer"],
    ["status", "COMPLETED"],
  ]);
  const done = await client.getTask({ id: asked.id });
  assert.equal(done.contextId, asked.contextId);
  assert.deepEqual(
    done.history.map((message) => message.parts.map(partText)),
    [["When?"], ["The moon landing"]], // the messages received (docs/a2a.md)
  );
});

test("scripted errors, an exhausted script and an error on a stream", async () => {
  const s = await session({
    name: "r",
    responses: [
      { error: { code: -32603, message: "boom", data: { why: "scripted" } } },
      { error: { code: -32001, message: "no such task" } },
      { error: { code: -32603, message: "streamed boom" } },
    ],
  });
  const client = await connect(s.a2a("r"));
  const boom = await thrown(client.sendMessage(ask("1")));
  assert.equal(boom.name, "JsonRpcTransportError");
  assert.equal(boom.message, "boom");
  assert.equal(boom.envelopeCode, -32603);
  assert.deepEqual(boom.data, { why: "scripted" });
  const notFound = await thrown(client.sendMessage(ask("2")));
  assert.equal(notFound.name, "TaskNotFoundError");
  assert.equal(notFound.message, "no such task");
  const { seen, error } = await collect(client.sendMessageStream(ask("3")));
  assert.deepEqual(seen, []);
  assert.equal(error.message, "SSE event contained an error: streamed boom (Code: -32603) Data: {}");
  assert.equal(error.cause.name, "JsonRpcTransportError");
  const exhausted = await thrown(client.sendMessage(ask("4")));
  assert.equal(exhausted.name, "JsonRpcTransportError");
  assert.match(exhausted.message, /no scripted response left/);
  assert.deepEqual(exhausted.data, { code: "llm_test_server_scenario_exhausted" });
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => [entry.operation, entry.status, entry.success, entry.error_code]),
    [
      ["agent_card", 200, true, null],
      ["SendMessage", 200, false, "-32603"],
      ["SendMessage", 200, false, "-32001"],
      ["SendStreamingMessage", 200, false, "-32603"],
      ["SendMessage", 200, false, "llm_test_server_scenario_exhausted"],
    ],
  );
});

// What the client does with each delivery fault on a streamed task (docs/a2a.md "Delays and stream faults").
const STREAM_FAULTS = {
  early_clean_end: {
    plan: { mode: "early_clean_end", after_content_frames: 1 },
    seen: [["task", "SUBMITTED"]],
    outcome: "early_end",
  },
  abort_connection: {
    plan: { mode: "abort_connection", after_content_frames: 1 },
    seen: [["task", "SUBMITTED"]],
    error: { name: "TypeError", message: /^terminated$/ },
    outcome: "aborted",
  },
  malformed_frame: {
    plan: { mode: "malformed_frame", after_content_frames: 1 },
    seen: [["task", "SUBMITTED"]],
    error: {
      name: "Error",
      message: /^Failed to parse SSE event data: .*Unexpected end of JSON input$/,
      cause: "SyntaxError",
    },
  },
  http_error_page: {
    plan: { mode: "http_error_page", status: 503 },
    seen: [],
    error: { name: "Error", message: /^HTTP error establishing stream for SendStreamingMessage: 503 / },
  },
  delay_then_continue: {
    plan: { mode: "delay_then_continue", after_content_frames: 1, delay_ms: 100 },
    seen: [
      ["task", "SUBMITTED"],
      ["status", "WORKING"],
      ["artifact", "sources"],
      ["artifact", "numbers"],
      ["status", "COMPLETED"],
    ],
    outcome: "completed",
  },
};

for (const [mode, expected] of Object.entries(STREAM_FAULTS)) {
  test(`stream_delivery ${mode} on a streamed task`, async () => {
    const s = await session({ name: "r", responses: [{ task: REPORT, stream_delivery: expected.plan }] });
    const client = await connect(s.a2a("r"));
    const { seen, taskId, error } = await collect(client.sendMessageStream(ask("Go")));
    assert.deepEqual(seen, expected.seen);
    if (expected.error) {
      assert.equal(error?.name, expected.error.name, String(error));
      assert.match(error.message, expected.error.message);
      if (expected.error.cause) assert.equal(error.cause?.name, expected.error.cause);
    } else {
      assert.equal(error, undefined);
    }
    // The task was committed before the answer was written: a broken stream does not change GetTask.
    if (taskId) {
      const task = await client.getTask({ id: taskId });
      assert.equal(state(task.status.state), "COMPLETED");
      assert.equal(task.artifacts.length, 2);
    }
    const [entry] = await control.requests(s.id, "provider=a2a&operation=SendStreamingMessage");
    if (expected.outcome) assert.equal(entry.transport_outcome, expected.outcome);
    assert.equal(entry.success, mode === "delay_then_continue");
  });
}

test("an agent that does not stream: sendMessageStream falls back to SendMessage", async () => {
  const s = await session({ name: "r", streaming: false, responses: [{ task: REPORT }] });
  const client = await connect(s.a2a("r"));
  assert.equal((await client.getAgentCard()).capabilities.streaming, false);
  assert.deepEqual((await collect(client.sendMessageStream(ask("Go")))).seen, [["task", "COMPLETED"]]);
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => entry.operation),
    ["agent_card", "SendMessage"],
  );
});

test("the 0.3 wire through the SDK's legacy compat transport", async () => {
  const s = await session({
    name: "r",
    responses: [{ text: "Hello." }, { task: REPORT }, { task: { states: ["submitted", "working"] } }],
  });
  // A card that offers only 0.3 (as a 0.3 server's would): the compat transport speaks the slash methods.
  const card = await new DefaultAgentCardResolver().resolve(`${s.a2a("r")}/`);
  const only03 = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3") };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
    }),
  );
  const client = await factory.createFromAgentCard(only03);
  assert.equal(client.protocolVersion, "0.3");
  const reply = await client.sendMessage(ask("Hi"));
  assert.equal(reply.role, Role.ROLE_AGENT);
  assert.deepEqual(reply.parts.map(partText), ["Hello."]);
  assert.deepEqual((await collect(client.sendMessageStream(ask("Report")))).seen, [
    ["task", "SUBMITTED"],
    ["status", "WORKING"],
    ["artifact", "sources"],
    ["artifact", "numbers"],
    ["status", "COMPLETED"],
  ]);
  const working = await client.sendMessage(ask("Work"));
  assert.equal(state(working.status.state), "WORKING");
  assert.equal(state((await client.getTask({ id: working.id })).status.state), "WORKING");
  assert.equal(state((await client.cancelTask({ id: working.id })).status.state), "CANCELED");
  const again = await thrown(client.cancelTask({ id: working.id }));
  assert.equal(again.name, "TaskNotCancelableError");
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  assert.deepEqual(
    journal.map((entry) => [entry.operation, entry.success]),
    [
      ["agent_card", true],
      ["message/send", true],
      ["message/stream", true],
      ["message/send", true],
      ["tasks/get", true],
      ["tasks/cancel", true],
      ["tasks/cancel", false],
    ],
  );
});

test("the documented MCP and A2A example runs, and docs/javascript.md shows it", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ["peers-example.mjs"], {
    env: { ...process.env, LLMTS_URL: server.url },
  });
  assert.equal(stdout.trim(), "ok");
  const page = await readFile(new URL("../../docs/javascript.md", import.meta.url), "utf8");
  const blocks = [...page.matchAll(/^```javascript\n([\s\S]*?)^```$/gm)].map((match) => match[1].trim());
  const example = await readFile(new URL("peers-example.mjs", import.meta.url), "utf8");
  assert.equal(blocks.length, 1);
  assert.ok(example.includes(blocks[0]), "docs/javascript.md's MCP and A2A example differs from peers-example.mjs");
});
