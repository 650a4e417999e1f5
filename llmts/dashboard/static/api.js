// The dashboard's only data source: the public control API (/admin-api), as a test would call it.
// Every request carries X-Llm-Test-Server-Dashboard: 1; the login cookie authorizes nothing without it.

const DASHBOARD_HEADER = { "X-Llm-Test-Server-Dashboard": "1" };
let unauthorizedHandler = () => {};

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

async function call(path, { session, method = "GET", body } = {}) {
  const headers = { ...DASHBOARD_HEADER };
  if (session) headers["X-Llm-Test-Server-Session"] = session;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (response.status === 401 && path.startsWith("/admin-api")) unauthorizedHandler();
  if (!response.ok) throw new ApiError(response.status, data);
  return { data, headers: response.headers };
}

export const api = {
  sessions: () => call("/admin-api/sessions"),
  createSession: () => call("/admin-api/sessions", { method: "POST" }),
  deleteSession: (id) => call(`/admin-api/sessions/${encodeURIComponent(id)}`, { method: "DELETE" }),
  reset: (session) => call("/admin-api/reset", { session, method: "POST" }),
  requests: (session, query) => call(`/admin-api/requests?${new URLSearchParams(query)}`, { session }),
  configuration: (session) => call("/admin-api/configuration", { session }),
  queues: (session) => call("/admin-api/queues", { session }),
  conversations: (session) => call("/admin-api/conversations", { session }),
  verify: (session, body) => call("/admin-api/verify", { session, method: "POST", body }),
  loginState: () => call("/dashboard/login"),
  login: (key) => call("/dashboard/login", { method: "POST", body: { key } }),
  logout: () => call("/dashboard/logout", { method: "POST" }),
};

/** Calls `tick` now and then every `ms` (after each call finished) until the returned stop is called. */
export function poll(tick, ms) {
  let timer = null;
  let stopped = false;
  const run = async () => {
    if (stopped) return;
    try {
      await tick();
    } catch (error) {
      if (!(error instanceof ApiError)) console.error(error);
    }
    if (!stopped) timer = setTimeout(run, ms);
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
