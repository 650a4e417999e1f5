// The dashboard's only data source: the public control API (/admin-api), as a test would call it.
// Every request carries X-Llm-Test-Server-Dashboard: 1; the login cookie authorizes nothing without it.
// In a trace file (docs/dashboard.md, "Trace files") the same calls answer from the export the page
// embeds, with the control API's semantics, read-only, and nothing is ever fetched.
import { queryEntries, QueryError, readTrace, sameJson, sessionListed, usageFromEntries } from "./trace_source.js";

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

/** The export this page shows when it is a trace file (its `test`, `session`, `verification`...), else null. */
export const trace = readTrace();

const liveApi = {
  sessions: (query) => {
    const params = new URLSearchParams(query || {}).toString(); // label, label_contains, test_outcome
    return call(`/admin-api/sessions${params ? `?${params}` : ""}`);
  },
  createSession: () => call("/admin-api/sessions", { method: "POST" }),
  deleteSession: (id) => call(`/admin-api/sessions/${encodeURIComponent(id)}`, { method: "DELETE" }),
  reset: (session) => call("/admin-api/reset", { session, method: "POST" }),
  requests: (session, query) => call(`/admin-api/requests?${new URLSearchParams(query)}`, { session }),
  configuration: (session) => call("/admin-api/configuration", { session }),
  queues: (session) => call("/admin-api/queues", { session }),
  conversations: (session) => call("/admin-api/conversations", { session }),
  verify: (session, body) => call("/admin-api/verify", { session, method: "POST", body }),
  usage: (session) => call("/admin-api/usage", { session }),
  loginState: () => call("/dashboard/login"),
  login: (key) => call("/dashboard/login", { method: "POST", body: { key } }),
  logout: () => call("/dashboard/logout", { method: "POST" }),
};

function readOnly(what) {
  const message = `${what} is not possible here: this is a trace file, read-only (what was recorded when the test ran)`;
  return new ApiError(405, { error: { code: "trace_read_only", message, details: [] } });
}

/** The control API's answers from the trace's export (a copy each time, so no view can change it). */
function traceApi(data) {
  const answer = async (body, headers = {}) => ({ data: structuredClone(body), headers: new Headers(headers) });
  const own = (session) => {
    if (session !== data.session.id) {
      const message = `this trace holds session ${data.session.id} only, not ${session}`;
      throw new ApiError(404, { error: { code: "llm_test_server_session_not_found", message, details: [] } });
    }
  };
  const journal = {
    "X-Total-Observed": String(data.total_observed ?? data.requests.length),
    "X-Evicted-Count": String(data.evicted_count ?? 0),
  };
  const refuse = (what) => async () => {
    throw readOnly(what);
  };
  return {
    sessions: (query) => answer([data.session].filter((info) => sessionListed(info, query))),
    createSession: refuse("Creating a session"),
    deleteSession: refuse("Deleting a session"),
    reset: refuse("Resetting a session"),
    requests: async (session, query) => {
      own(session);
      let result;
      try {
        result = queryEntries(data.requests, query);
      } catch (error) {
        if (!(error instanceof QueryError)) throw error;
        throw new ApiError(400, { error: { code: "invalid_query", message: error.message, details: error.details } });
      }
      return answer(result.page, { ...journal, "X-Total-Count": String(result.total) });
    },
    configuration: async (session) => {
      own(session);
      return answer(data.configuration || {}, { "X-Llm-Test-Server-Configured": data.configured ? "true" : "false" });
    },
    queues: async (session) => {
      own(session);
      return answer(data.queues || []);
    },
    conversations: async (session) => {
      own(session);
      return answer(data.conversations || []);
    },
    // The export's usage (the server's running totals); an older export's summed from its entries.
    usage: async (session) => {
      own(session);
      return answer(data.usage || usageFromEntries(data.requests));
    },
    // The test's own expectations answer with the verdict recorded when it ran; nothing else can run.
    verify: async (session, body) => {
      own(session);
      if (data.verification && data.expectation && sameJson(body, data.expectation)) return answer(data.verification);
      throw readOnly("Running a new verification");
    },
    loginState: () => answer({ key_required: false, logged_in: false }),
    login: refuse("Logging in"),
    logout: refuse("Logging out"),
  };
}

export const api = trace ? traceApi(trace) : liveApi;

/** Calls `tick` now and then every `ms` (after each call finished) until the returned stop is called.
 * In a trace file nothing changes: `tick` runs once. */
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
    if (!stopped && !trace) timer = setTimeout(run, ms);
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
