// A session's scripted A2A agents through the official JavaScript A2A client (@a2a-js/sdk) against a real
// llmts server (docs/a2a.md, docs/javascript.md). Run with `tox -e js` (or `npm test` with LLMTS_PYTHON).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";

import { Role, TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";

import { Control, startServer } from "./llmts.mjs";

let server;
let control;
before(async () => {
  server = await startServer();
  control = new Control(server.url);
});
after(() => server?.stop());

async function session(...agents) {
  const created = await control.session({ a2a_agents: agents });
  return { ...created, a2a: (name) => `${created.provider_base}/a2a/${name}` };
}

const ask = (text, fields = {}) => ({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: "text", value: text } }], ...fields },
});

async function thrown(promise) {
  try {
    await promise;
  } catch (error) {
    return { name: error.name, ctor: error.constructor.name, message: error.message, code: error.envelopeCode, data: error.data, cause: error.cause && { name: error.cause.name, message: error.cause.message, code: error.cause.envelopeCode } };
  }
  assert.fail("expected a rejection");
}

async function collect(iterable) {
  const events = [];
  try {
    for await (const event of iterable) events.push(event);
  } catch (error) {
    return { events, error: { name: error.name, ctor: error.constructor.name, message: error.message, cause: error.cause && String(error.cause) } };
  }
  return { events };
}

const TASK = { states: ["submitted", "working", "completed"], artifacts: [{ name: "sources", text: "Paper A" }], message: "Done." };

test("probe errors", async () => {
  const s = await session({
    name: "r",
    responses: [
      { error: { code: -32603, message: "boom", data: { why: "scripted" } } },
      { error: { code: -32001, message: "no task" } },
      { task: TASK, stream_delivery: { mode: "early_clean_end", after_content_frames: 1 } },
      { task: TASK, stream_delivery: { mode: "abort_connection", after_content_frames: 1 } },
      { task: TASK, stream_delivery: { mode: "malformed_frame", after_content_frames: 1 } },
      { task: TASK, stream_delivery: { mode: "http_error_page", status: 503 } },
      { error: { code: -32603, message: "streamed boom" } },
    ],
  });
  const client = await new ClientFactory().createFromUrl(`${s.a2a("r")}/`);
  console.log(await thrown(client.sendMessage(ask("1"))));
  console.log(await thrown(client.sendMessage(ask("2"))));
  for (let i = 0; i < 5; i++) {
    const r = await collect(client.sendMessageStream(ask("s")));
    console.log(r.events.map((e) => e.payload.$case), r.error);
  }
  console.log(await thrown(client.sendMessage(ask("exhausted"))));
  console.log(await thrown(client.getTask({ id: "task-nope" })));
  console.log(await thrown(new ClientFactory().createFromUrl(s.a2a("r"))));
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  console.log(journal.map((e) => [e.operation, e.status, e.success, e.error_code, e.transport_outcome]));
});

test("probe legacy", async () => {
  const s = await session({ name: "r", responses: [{ text: "Hello." }, { task: TASK }, { task: { states: ["submitted", "working"] } }] });
  const card = await new DefaultAgentCardResolver().resolve(`${s.a2a("r")}/`);
  const only03 = { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === "0.3") };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
    }),
  );
  const client = await factory.createFromAgentCard(only03);
  console.log(client.protocolVersion);
  console.log(JSON.stringify(await client.sendMessage(ask("Hi"))));
  const r = await collect(client.sendMessageStream(ask("s")));
  console.log(JSON.stringify(r));
  const t = await client.sendMessage(ask("w"));
  console.log(JSON.stringify(t));
  console.log(JSON.stringify(await client.getTask({ id: t.id, historyLength: 1 })));
  console.log(JSON.stringify(await client.cancelTask({ id: t.id })));
  console.log(await thrown(client.cancelTask({ id: t.id })));
  const journal = await control.requests(s.id, "provider=a2a&order=asc");
  console.log(journal.map((e) => [e.operation, e.status, e.success, e.error_code]));
});
