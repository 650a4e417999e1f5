// OpenAI Realtime through the openai JS SDK's own realtime clients against a real llmts server over TLS
// (docs/javascript.md, "Realtime over TLS"; docs/realtime.md): `OpenAIRealtimeWebSocket` (Node's global
// WebSocket, the key as the `openai-insecure-api-key.<key>` subprotocol) and `OpenAIRealtimeWS` (the `ws`
// package, a bearer header). Both always dial wss://, so this file runs against the TLS server that
// `with-tls-server.mjs` starts and trusts through NODE_EXTRA_CA_CERTS (`npm test` does; by hand:
// `node with-tls-server.mjs --experimental-websocket --test realtime.test.mjs`). The SDK does not validate
// what it receives: every server event of every test is type-checked against the SDK's own
// `RealtimeServerEvent` type at the end (the last test).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { before, test } from "node:test";
import { promisify } from "node:util";

import OpenAI, { AzureOpenAI } from "openai";
import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import ts from "typescript";

import { Control } from "./llmts.mjs";

const MODEL = "gpt-realtime";
const WAIT_MS = 15000;
const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const run = promisify(execFile);

// Every server event any connection of this file received, for the type check at the end.
const RECEIVED = [];

let url;
let control;
before(() => {
  url = process.env.LLMTS_TLS_URL;
  assert.ok(
    url?.startsWith("https://") && process.env.NODE_EXTRA_CA_CERTS,
    "run through `node with-tls-server.mjs --experimental-websocket --test realtime.test.mjs` (npm test does): " +
      "the SDK dials wss:// and Node must trust the server's certificate from start-up",
  );
  assert.equal(typeof WebSocket, "function", "Node 20 needs --experimental-websocket for OpenAIRealtimeWebSocket");
  control = new Control(url);
});

/** A session whose realtime scenario answers with `responses` in order (`extra`: more configuration). */
const session = (responses, extra = {}) =>
  control.session({ scenarios: [{ id: "voice", operation: "realtime", responses }], ...extra });
const openai = (s, options) => new OpenAI({ baseURL: `${s.provider_base}/openai/v1`, apiKey: "sk-test", ...options });
const journal = (s) => control.requests(s.id, "operation=realtime&order=asc");
const texts = (events, type = "response.output_text.delta") =>
  events.filter((event) => event.type === type).map((event) => event.delta);

class Closed extends Error {
  constructor({ code, reason }) {
    super(`the connection closed: ${code} ${reason}`);
    this.name = "Closed";
    this.code = code;
    this.reason = reason;
  }
}

/**
 * One SDK realtime client, read in order: `next()` is the next server event, and rejects with the SDK's
 * `error` (one that does not come from an `error` event: those are events) or `Closed` if that comes
 * first. `errors` holds every error the SDK emitted, `closed` resolves with the close event's code/reason.
 */
class Connection {
  constructor(rt) {
    this.rt = rt;
    this.errors = [];
    this._items = [];
    this._wake = () => {};
    rt.on("event", (event) => {
      RECEIVED.push(event);
      this._push({ event });
    });
    rt.on("error", (error) => {
      this.errors.push(error);
      if (error.error === undefined) this._push({ error });
    });
    // Both sockets (the global WebSocket and ws's) are EventTargets with the close event's code and reason.
    this.closed = new Promise((resolve) => {
      rt.socket.addEventListener("close", (event) => {
        const closed = { code: event.code, reason: String(event.reason) };
        this._push({ closed });
        resolve(closed);
      });
    });
  }

  _push(item) {
    this._items.push(item);
    this._wake();
  }

  async next(waitMs = WAIT_MS) {
    if (!this._items.length) {
      let timer;
      await new Promise((resolve, reject) => {
        this._wake = resolve;
        timer = setTimeout(() => reject(new Error(`no server event within ${waitMs} ms`)), waitMs);
      }).finally(() => clearTimeout(timer));
    }
    const { event, error, closed } = this._items.shift();
    if (error) throw error;
    if (closed) throw new Closed(closed);
    return event;
  }

  /** The events up to and including the first of `type`. */
  async until(type = "response.done") {
    const events = [];
    for (;;) {
      const event = await this.next();
      events.push(event);
      if (event.type === type) return events;
    }
  }

  send(event) {
    this.rt.send(event);
  }

  /** A user message, then a response (text unless told otherwise: the service's default is audio). */
  ask(text, modalities = ["text"]) {
    this.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    this.send({ type: "response.create", response: { output_modalities: modalities } });
  }

  async end() {
    this.rt.close();
    return this.closed;
  }
}

/** A connection once its `session.created` arrived (the first event the server sends). */
async function open(rt) {
  const connection = new Connection(rt);
  const first = await connection.next();
  assert.equal(first.type, "session.created");
  connection.session = first.session;
  return connection;
}
const viaWebSocket = (s, options) => open(new OpenAIRealtimeWebSocket({ model: MODEL }, openai(s, options)));
const viaWs = (s, options) => open(new OpenAIRealtimeWS({ model: MODEL }, openai(s, options)));

/** `speech_pcm(text)`, the generated speech of docs/realtime.md, from the server's own Python package. */
async function speechPcm(text) {
  const python = process.env.LLMTS_PYTHON ?? "python";
  const code =
    "import base64, sys\nfrom llmts.runtime.media.audio import speech_pcm\n" +
    "sys.stdout.write(base64.b64encode(speech_pcm(sys.argv[1])).decode())";
  const { stdout } = await run(python, ["-c", code, text]);
  return Buffer.from(stdout, "base64");
}

async function textTurn(connection, s) {
  connection.send({ type: "session.update", session: { type: "realtime", output_modalities: ["text"] } });
  const updated = await connection.next();
  assert.equal(updated.type, "session.updated");
  assert.deepEqual(updated.session.output_modalities, ["text"]);
  connection.ask("hi");
  const events = await connection.until();
  const types = events.map((event) => event.type);
  assert.deepEqual(types, [
    "conversation.item.added",
    "conversation.item.done",
    "response.created",
    "response.output_item.added",
    "conversation.item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "conversation.item.done",
    "response.done",
  ]);
  assert.deepEqual(texts(events), ["Hello", " there."]);
  const done = events.at(-1).response;
  assert.equal(done.status, "completed");
  assert.equal(done.id, events[2].response.id);
  assert.ok(done.usage.output_tokens > 0 && done.usage.input_tokens > 0);
  assert.equal(done.usage.total_tokens, done.usage.input_tokens + done.usage.output_tokens);
  assert.deepEqual(done.output[0].content, [{ type: "output_text", text: "Hello there." }]);
  const [entry] = await journal(s);
  assert.equal(entry.provider, "openai");
  assert.equal(entry.model, MODEL);
  assert.equal(entry.scenario, "voice");
  assert.equal(entry.success, true);
  assert.equal(entry.transport_outcome, "completed");
  assert.deepEqual(
    entry.client_events.map((event) => event.type),
    ["session.update", "conversation.item.create", "response.create"],
  );
}

test("OpenAIRealtimeWebSocket: a text turn in the GA sequence, the key as a subprotocol over wss", async () => {
  const s = await session([{ text: "Hello there.", chunks: ["Hello", " there."] }]);
  const connection = await viaWebSocket(s);
  assert.equal(connection.rt.url.protocol, "wss:");
  assert.equal(connection.rt.socket.protocol, "realtime"); // the server echoed the subprotocol Node requires
  assert.equal(connection.session.model, MODEL);
  await textTurn(connection, s);
  assert.deepEqual(await connection.end(), { code: 1000, reason: "OK" });
  assert.deepEqual(connection.errors, []);
});

test("OpenAIRealtimeWS: the same turn with a bearer header through the ws package", async () => {
  const s = await session([{ text: "Hello there.", chunks: ["Hello", " there."] }], {
    provider_credentials: { openai: "sk-right" },
  });
  const connection = await viaWs(s, { apiKey: "sk-right" });
  await textTurn(connection, s);
  await connection.end();
  assert.deepEqual(connection.errors, []);
});

test("a wrong key: the error event, then close 3000, through both clients", async () => {
  const s = await control.session({ provider_credentials: { openai: "sk-right" } });
  for (const client of [OpenAIRealtimeWebSocket, OpenAIRealtimeWS]) {
    const connection = new Connection(new client({ model: MODEL }, openai(s, { apiKey: "sk-wrong" })));
    const error = await connection.next();
    assert.equal(error.type, "error");
    assert.equal(error.error.code, "invalid_api_key");
    await assert.rejects(connection.next(), (error) => error instanceof Closed && error.code === 3000);
    // The SDK turned the error event into its `error` emission, with the service's fields.
    assert.equal(connection.errors.length, 1);
    assert.equal(connection.errors[0].error.code, "invalid_api_key");
  }
});

test("an audio turn: base64 PCM16 deltas that decode to the generated speech, and its transcript", async () => {
  const words = "Hi there, friend.";
  const s = await session([{ text: words, audio: "generated" }]);
  const connection = await viaWebSocket(s);
  connection.ask("say hi", ["audio"]);
  const events = await connection.until();
  await connection.end();
  const deltas = events.filter((event) => event.type === "response.output_audio.delta");
  const pcm = Buffer.concat(deltas.map((event) => Buffer.from(event.delta, "base64")));
  const expected = await speechPcm(words);
  assert.ok(expected.length > 0);
  assert.equal(pcm.length, expected.length);
  assert.ok(pcm.equals(expected));
  assert.equal(texts(events, "response.output_audio_transcript.delta").join(""), words);
  assert.deepEqual(texts(events), []); // no text deltas in an audio answer
  const done = events.find((event) => event.type === "response.output_audio_transcript.done");
  assert.equal(done.transcript, words);
  assert.deepEqual(events.at(-1).response.output[0].content, [{ type: "output_audio", transcript: words }]);
});

test("a tool round trip: declared in session.update, answered, journaled and verified", async () => {
  const s = await session([
    { tool_calls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Paris" } }] },
    { text: "It is sunny in Paris." },
  ]);
  const connection = await viaWebSocket(s);
  connection.send({ type: "session.update", session: { type: "realtime", tools: [WEATHER_TOOL] } });
  const updated = await connection.next();
  assert.equal(updated.session.tools[0].name, "get_weather");
  connection.ask("weather in Paris?");
  const first = await connection.until();
  const [call] = first.filter((event) => event.type === "response.function_call_arguments.done");
  assert.equal(call.call_id, "call_w1");
  assert.equal(call.name, "get_weather");
  assert.deepEqual(JSON.parse(call.arguments), { city: "Paris" });
  const item = first.at(-1).response.output[0];
  assert.equal(item.type, "function_call");
  assert.equal(item.call_id, "call_w1");
  connection.send({
    type: "conversation.item.create",
    item: { type: "function_call_output", call_id: "call_w1", output: '{"sky": "clear"}' },
  });
  connection.send({ type: "response.create", response: { output_modalities: ["text"] } });
  const second = await connection.until();
  await connection.end();
  assert.equal(texts(second).join(""), "It is sunny in Paris.");
  const entries = await journal(s);
  assert.equal(entries.length, 2);
  assert.equal(entries[1].tool_results[0].call_id, "call_w1");
  const report = await control.call("POST", "/admin-api/verify", {
    session: s.id,
    body: {
      requests: [
        {
          name: "answered the tool",
          query: { operation: "realtime", request_id: entries[1].request_id },
          tools: [{ kind: "result", call_id: "call_w1", result: { sky: "clear" } }],
        },
      ],
    },
  });
  assert.equal(report.passed, true, JSON.stringify(report));
});

test("a tool call the session did not declare is refused: an error event and a failed response", async () => {
  const s = await session([{ tool_calls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Paris" } }] }]);
  const connection = await viaWebSocket(s);
  connection.ask("weather in Paris?");
  const events = await connection.until();
  await connection.end();
  const [error] = events.filter((event) => event.type === "error");
  assert.equal(error.error.code, "llm_test_server_fixture_mismatch");
  assert.match(error.error.message, /get_weather/);
  // The failed response names the error with the two fields of the SDK's RealtimeResponseStatus.Error.
  assert.deepEqual(events.at(-1).response.status_details, {
    type: "failed",
    error: { type: "invalid_request_error", code: "llm_test_server_fixture_mismatch" },
  });
  assert.equal(connection.errors.length, 1);
});

test("response.cancel while a delay holds the answer: response.done cancelled at once", async () => {
  const s = await session([
    {
      text: "one two three",
      chunks: ["one", " two", " three"],
      stream_delivery: { mode: "delay_then_continue", after_content_frames: 1, delay_ms: 10000 },
    },
  ]);
  const connection = await viaWebSocket(s);
  connection.ask("count");
  const seen = await connection.until("response.output_text.delta");
  const started = performance.now();
  connection.send({ type: "response.cancel" });
  const rest = await connection.until();
  const waited = performance.now() - started;
  await connection.end();
  assert.ok(waited < 7000, `the cancel did not cut the 10 s delay short (${waited} ms)`);
  const done = rest.at(-1).response;
  assert.equal(done.status, "cancelled");
  assert.equal(done.status_details.reason, "client_cancelled");
  assert.deepEqual(texts([...seen, ...rest]), ["one"]);
  const [entry] = await journal(s);
  assert.equal(entry.success, false);
});

test("close after two content events: the SDK's socket closes with the code and reason", async () => {
  const close = { mode: "close", after_content_frames: 2, code: 1011, reason: "boom" };
  const s = await session([
    { text: "a b c", chunks: ["a", " b", " c"], stream_delivery: close },
    { text: "a b c", chunks: ["a", " b", " c"], stream_delivery: close },
  ]);
  for (const connect of [viaWebSocket, viaWs]) {
    const connection = await connect(s);
    connection.ask("go");
    const seen = [];
    const closed = await (async () => {
      for (;;) {
        try {
          seen.push(await connection.next());
        } catch (error) {
          return error;
        }
      }
    })();
    assert.ok(closed instanceof Closed, String(closed));
    assert.deepEqual([closed.code, closed.reason], [1011, "boom"]);
    assert.deepEqual(texts(seen), ["a", " b"]);
    assert.deepEqual(connection.errors, []);
  }
  const entries = await journal(s);
  assert.equal(entries.length, 2);
  for (const entry of entries) {
    assert.deepEqual([entry.close_code, entry.close_reason], [1011, "boom"]);
    assert.equal(entry.transport_outcome, "early_end");
  }
});

test("abort_connection: the TCP connection drops without a close frame, 1006 to both clients", async () => {
  const abort = { text: "a b", chunks: ["a", " b"], stream_delivery: { mode: "abort_connection" } };
  const s = await session([abort, abort]);
  for (const connect of [viaWebSocket, viaWs]) {
    const connection = await connect(s);
    connection.ask("go");
    assert.deepEqual(await connection.closed, { code: 1006, reason: "" });
    assert.deepEqual(connection.errors, []); // a close, not an error emission
  }
  const entries = await journal(s);
  assert.deepEqual(
    entries.map((entry) => entry.transport_outcome),
    ["aborted", "aborted"],
  );
});

test("malformed_event: the SDK's error 'could not parse websocket event', and the connection stays open", async () => {
  const s = await session([
    { text: "a b", chunks: ["a", " b"], stream_delivery: { mode: "malformed_event" } },
    { text: "recovered" },
  ]);
  const connection = await viaWebSocket(s);
  connection.ask("go");
  const error = await (async () => {
    for (;;) {
      try {
        await connection.next();
      } catch (error) {
        return error;
      }
    }
  })();
  assert.equal(error.message, "could not parse websocket event");
  assert.ok(error.cause instanceof SyntaxError);
  connection.ask("again");
  const events = await connection.until();
  await connection.end();
  assert.equal(texts(events).join(""), "recovered");
});

test("Azure: OpenAIRealtimeWebSocket.azure (key in the query), OpenAIRealtimeWS.azure (api-key header)", async () => {
  const hi = { text: "Azure says hi." };
  const s = await control.session({
    models: [MODEL],
    azure_deployments: { "voice-prod": MODEL },
    provider_credentials: { "azure-openai": "az-key" },
    scenarios: [{ operation: "realtime", model: MODEL, responses: [hi, hi] }],
  });
  const azure = new AzureOpenAI({
    endpoint: `${s.provider_base}/azure-openai`,
    apiKey: "az-key",
    apiVersion: "2025-04-01-preview",
  });
  for (const client of [OpenAIRealtimeWebSocket, OpenAIRealtimeWS]) {
    const connection = await open(await client.azure(azure, { deploymentName: "voice-prod" }));
    assert.equal(connection.rt.url.pathname.endsWith("/azure-openai/openai/realtime"), true);
    assert.equal(connection.rt.url.searchParams.get("deployment"), "voice-prod");
    // The session requires the key: the browser-style client put it in the query (the SDK redacts it
    // there once dialled), ws sent it as a header.
    assert.equal(connection.rt.url.searchParams.has("api-key"), client === OpenAIRealtimeWebSocket);
    connection.ask("hello");
    const events = await connection.until();
    await connection.end();
    assert.equal(texts(events).join(""), "Azure says hi.");
  }
  const entries = await journal(s);
  assert.deepEqual(
    entries.map((entry) => [entry.provider, entry.model, entry.path.endsWith("/openai/realtime")]),
    [
      ["azure-openai", MODEL, true],
      ["azure-openai", MODEL, true],
    ],
  );
});

test("trust: without NODE_EXTRA_CA_CERTS both clients refuse the certificate; ws takes a ca option", async () => {
  // A node started without the certificate: what a user sees before trusting it, and ws's own option.
  const script = `
    import { readFileSync } from "node:fs";
    import OpenAI from "openai";
    import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";
    import { OpenAIRealtimeWS } from "openai/realtime/ws";
    const client = new OpenAI({ baseURL: process.env.BASE, apiKey: "sk-test" });
    const failed = (rt) => new Promise((resolve) => rt.on("error", (error) => resolve(error.message)));
    const global = await failed(new OpenAIRealtimeWebSocket({ model: "${MODEL}" }, client));
    const ws = await failed(new OpenAIRealtimeWS({ model: "${MODEL}" }, client));
    const options = { ca: readFileSync(process.env.CA) };
    const trusted = new OpenAIRealtimeWS({ model: "${MODEL}", options }, client);
    const first = await new Promise((resolve) => trusted.on("event", resolve));
    trusted.close();
    console.log(JSON.stringify({ global, ws, first: first.type }));
  `;
  const s = await control.session();
  const { NODE_EXTRA_CA_CERTS: ca, ...env } = process.env;
  const { stdout } = await run(process.execPath, ["--experimental-websocket", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL(".", import.meta.url)),
    env: { ...env, BASE: `${s.provider_base}/openai/v1`, CA: ca },
  });
  assert.deepEqual(JSON.parse(stdout), {
    global: "Received network error or non-101 status code.", // undici says no more
    ws: "self-signed certificate",
    first: "session.created",
  });
});

test("the documented realtime example runs, and docs/javascript.md shows it", async () => {
  const { stdout } = await run(process.execPath, ["--experimental-websocket", "realtime-example.mjs"], {
    cwd: fileURLToPath(new URL(".", import.meta.url)),
    env: { ...process.env, LLMTS_URL: url },
  });
  assert.equal(stdout.trim(), "ok");
  const page = await readFile(new URL("../../docs/javascript.md", import.meta.url), "utf8");
  const blocks = [...page.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => match[1].trim());
  const example = await readFile(new URL("realtime-example.mjs", import.meta.url), "utf8");
  assert.ok(
    blocks.some((block) => block.includes("OpenAIRealtimeWebSocket") && example.includes(block)),
    "docs/javascript.md's realtime example differs from realtime-example.mjs",
  );
});

/**
 * `value` without its null-valued properties. llmts sends `null` for optional fields without a value
 * (`include`, `audio.input.noise_reduction` and `transcription`, which the API reference documents as
 * "object or null"; a response's `status_details`, and its `usage` while in progress), where the SDK's
 * types say only `?: T`; the Python SDK's models read such a null as absent, and so does this check. A
 * null where the type requires a field is still an error (the field is then missing).
 */
function withoutNulls(value) {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== null)
      .map(([key, field]) => [key, withoutNulls(field)]),
  );
}

/**
 * TypeScript's diagnostics for `events` assigned to the SDK's `RealtimeServerEvent[]` (strict: a missing
 * required field, a property the type does not have, or a value outside a literal union is an error),
 * as `{event, message}`. The source is checked in memory, next to this file so `openai` resolves.
 */
function typeErrors(events) {
  const name = fileURLToPath(new URL("realtime-events.check.ts", import.meta.url));
  // The API reference sends `session.created`/`.updated` with the session in its response shape (`id`,
  // `object` required), the SDK's RealtimeSessionCreateResponse; the SDK's event types name the request
  // shape, which has neither field, so those two are checked against the response shape.
  const header = [
    'import type { RealtimeSessionCreateResponse } from "openai/resources/realtime/client-secrets";',
    "import type {",
    "  RealtimeServerEvent, SessionCreatedEvent, SessionUpdatedEvent,",
    '} from "openai/resources/realtime/realtime";',
    'type WithSession<E> = Omit<E, "session"> & { session: RealtimeSessionCreateResponse };',
    "type ServerEvent =",
    "  | Exclude<RealtimeServerEvent, SessionCreatedEvent | SessionUpdatedEvent>",
    "  | WithSession<SessionCreatedEvent>",
    "  | WithSession<SessionUpdatedEvent>;",
    "export const events: ServerEvent[] = [",
  ];
  const source = [...header, ...events.map((event) => `  ${JSON.stringify(event)},`), "];"].join("\n");
  const options = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile: read } = host;
  host.getSourceFile = (file, ...rest) =>
    file === name ? ts.createSourceFile(file, source, options.target, true) : getSourceFile.call(host, file, ...rest);
  host.fileExists = (file) => file === name || fileExists.call(host, file);
  host.readFile = (file) => (file === name ? source : read.call(host, file));
  const program = ts.createProgram([name], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const line = diagnostic.file ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line : -1;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    return { event: events[line - header.length], message };
  });
}

// The kinds of event the tests above receive (each must have been seen and checked).
const EVENT_TYPES = [
  "session.created",
  "session.updated",
  "conversation.item.added",
  "conversation.item.done",
  "response.created",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.output_audio.delta",
  "response.output_audio.done",
  "response.output_audio_transcript.delta",
  "response.output_audio_transcript.done",
  "response.function_call_arguments.delta",
  "response.function_call_arguments.done",
  "response.content_part.done",
  "response.output_item.done",
  "response.done",
  "error",
];

test("every server event received above is a RealtimeServerEvent of the SDK's types", () => {
  // The check can fail: a text delta without its content_index, and one with a property the type lacks.
  const delta = RECEIVED.find((event) => event.type === "response.output_text.delta");
  const { content_index, ...missing } = delta;
  const broken = typeErrors([missing, { ...delta, extra: 1 }]);
  assert.equal(broken.length, 2, JSON.stringify(broken));
  assert.match(broken[0].message, /content_index/);
  assert.match(broken[1].message, /extra/);
  // Identical events are checked once; every kind of event the tests above met is among them.
  const distinct = [...new Map(RECEIVED.map((event) => [JSON.stringify(event), event])).values()];
  const types = new Set(distinct.map((event) => event.type));
  for (const type of EVENT_TYPES) assert.ok(types.has(type), `no ${type} event was received`);
  const errors = typeErrors(distinct.map(withoutNulls)).map(({ event, message }) => `${event?.type}: ${message}`);
  assert.deepEqual(errors, []);
});
