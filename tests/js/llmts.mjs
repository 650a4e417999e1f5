// Start and stop a real llmts server from Node, and drive a session through the control API with fetch.
// The server is the Python package: `LLMTS_PYTHON` (default `python`) must be able to `import llmts`.
import { spawn } from "node:child_process";

const BANNER = /llmts listening on (https?:\/\/\S+)/;
const CERTIFICATE = /llmts: TLS certificate: (.+) \(trust it/;

/**
 * Start `python -m llmts serve --port 0` (with `tls`, `--tls`: https and wss with a certificate generated
 * at start-up) and resolve with `{url, caFile, stop}` once it printed its URL; `caFile` is the certificate
 * to trust (undefined without `tls`), removed by the server when it stops.
 */
export function startServer({
  python = process.env.LLMTS_PYTHON ?? "python",
  timeoutMs = 30000,
  tls = false,
} = {}) {
  const args = ["-m", "llmts", "serve", "--port", "0", "--parent-pid", String(process.pid)];
  if (tls) args.push("--tls");
  const child = spawn(python, args, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (data) => {
    stderr += data;
  });
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`llmts did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`llmts exited with ${code} before it was ready:\n${stderr}`));
    });
    child.stdout.on("data", (data) => {
      stdout += data;
      const match = BANNER.exec(stdout);
      if (match) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        const stop = () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.on("exit", () => done());
            child.kill("SIGTERM");
          });
        resolve({ url: match[1], caFile: CERTIFICATE.exec(stdout)?.[1], stop });
      }
    });
  });
}

/** The control API of one server: sessions, configuration and the request journal. */
export class Control {
  constructor(url, controlKey = undefined) {
    this.url = url;
    this.headers = { "content-type": "application/json" };
    if (controlKey) this.headers.authorization = `Bearer ${controlKey}`;
  }

  async call(method, path, { body, session } = {}) {
    const headers = { ...this.headers };
    if (session) headers["x-llm-test-server-session"] = session;
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  /** `POST /admin-api/sessions` then `POST /admin-api/configure`: `{id, provider_base}`. */
  async session(configuration = undefined) {
    const created = await this.call("POST", "/admin-api/sessions");
    if (configuration !== undefined) {
      await this.call("POST", "/admin-api/configure", { body: configuration, session: created.id });
    }
    return created;
  }

  requests(session, query = "order=asc") {
    return this.call("GET", `/admin-api/requests?${query}`, { session });
  }

  deleteSession(session) {
    return this.call("DELETE", `/admin-api/sessions/${session}`);
  }
}
