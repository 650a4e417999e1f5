// `node with-tls-server.mjs <node arguments...>`: start a TLS llmts server (`llmts serve --tls`, a certificate
// generated at start-up), then run `node <node arguments...>` with `LLMTS_TLS_URL` (its https URL) and
// `NODE_EXTRA_CA_CERTS` (its certificate) set, stop the server and exit with node's code.
//
// Why a second process: the openai SDK's realtime clients always dial wss://, and the global WebSocket that
// `OpenAIRealtimeWebSocket` uses takes no CA option; Node reads NODE_EXTRA_CA_CERTS once, at start-up, so
// the certificate has to exist before the node that trusts it starts (docs/javascript.md, "Realtime over
// TLS"). `node --test` hands its environment and flags to the processes of its test files.
import { spawn } from "node:child_process";

import { startServer } from "./llmts.mjs";

const server = await startServer({ tls: true });
const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: "inherit",
  env: { ...process.env, LLMTS_TLS_URL: server.url, NODE_EXTRA_CA_CERTS: server.caFile },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
const code = await new Promise((resolve) => child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0))));
await server.stop();
process.exit(code);
