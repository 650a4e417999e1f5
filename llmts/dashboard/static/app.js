// The router: one view at a time in <main id="view">, chosen by the location hash. Views return a
// cleanup function (their polling stops when another view is shown). In a trace file (api.js's `trace`)
// a banner names the test and its outcome, and the page opens on the traced session's journal.
import { api, ApiError, onUnauthorized, trace } from "./api.js";
import { clear, errorText, h, when } from "./dom.js";
import { mountConfig } from "./views/config.js";
import { mountGraphs } from "./views/graphs.js";
import { mountJournal } from "./views/journal.js";
import { mountConnection } from "./views/realtime.js";
import { mountRequest } from "./views/request.js";
import { mountSessions } from "./views/sessions.js";
import { mountVerify } from "./views/verify.js";

const view = document.getElementById("view");
const nav = document.getElementById("nav");
const logoutButton = document.getElementById("logout");
let cleanup = () => {};
let loginShown = false;

const SESSION_TABS = [
  ["journal", "Journal"],
  ["graphs", "Graphs"],
  ["verify", "Verify"],
  ["config", "Configuration"],
];

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, query: new URLSearchParams(query) };
}

function renderNav(sessionId, current) {
  clear(nav);
  nav.append(h("a", { href: "#/", class: current === "sessions" ? "active" : "" }, "Sessions"));
  if (!sessionId) return;
  nav.append(h("span", { class: "crumb", title: sessionId }, sessionId));
  for (const [name, label] of SESSION_TABS) {
    const href = `#/sessions/${encodeURIComponent(sessionId)}/${name}`;
    nav.append(h("a", { href, class: current === name ? "active" : "", "data-tab": name }, label));
  }
}

function route() {
  cleanup();
  cleanup = () => {};
  loginShown = false;
  clear(view);
  const { parts, query } = parseHash();
  // A trace opens on its session's journal (an explicit "#/" still lists the one session).
  if (trace && location.hash === "") parts.push("sessions", trace.session.id, "journal");
  const ctx = { query, navigate: (hash) => (location.hash = hash) };
  try {
    if (parts.length === 0 || parts[0] !== "sessions" || parts.length < 3) {
      renderNav(null, "sessions");
      cleanup = mountSessions(view, ctx);
      return;
    }
    const [, sessionId, name, extra] = parts;
    ctx.session = sessionId;
    if (name === "requests" && extra) {
      renderNav(sessionId, "journal");
      cleanup = mountRequest(view, ctx, extra);
    } else if (name === "connections" && extra) {
      renderNav(sessionId, "journal");
      cleanup = mountConnection(view, ctx, extra);
    } else if (name === "graphs") {
      renderNav(sessionId, "graphs");
      cleanup = mountGraphs(view, ctx);
    } else if (name === "verify") {
      renderNav(sessionId, "verify");
      cleanup = mountVerify(view, ctx);
    } else if (name === "config") {
      renderNav(sessionId, "config");
      cleanup = mountConfig(view, ctx);
    } else {
      renderNav(sessionId, "journal");
      cleanup = mountJournal(view, ctx);
    }
  } catch (error) {
    view.append(h("p", { class: "error" }, errorText(error)));
  }
}

function showLogin() {
  if (loginShown) return;
  loginShown = true;
  cleanup();
  cleanup = () => {};
  clear(nav);
  logoutButton.hidden = true;
  const input = h("input", {
    type: "password",
    id: "control-key",
    name: "key",
    autocomplete: "current-password",
    required: true,
    autofocus: true,
  });
  const message = h("p", { class: "error", id: "login-error", role: "alert" });
  const form = h(
    "form",
    { class: "login", id: "login-form" },
    h("h1", {}, "llmts dashboard"),
    h("p", {}, "This server has a control key. Enter it once; the browser keeps a login cookie until you log out."),
    h("label", { for: "control-key" }, "Control key"),
    input,
    h("button", { type: "submit" }, "Log in"),
    message,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    try {
      await api.login(input.value);
      input.value = "";
      logoutButton.hidden = false;
      route();
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) message.textContent = "That key was refused.";
      else if (error instanceof ApiError && error.status === 429) message.textContent = error.message;
      else message.textContent = errorText(error);
    }
  });
  clear(view).append(form);
  input.focus();
}

const BAD_OUTCOMES = new Set(["failed", "error"]);

/** The trace's test: node id, outcome (red when it failed), duration, phase, and the failure text. */
function traceBanner(data) {
  const test = data.test || {};
  const outcome = String(test.outcome || data.session.test_outcome || "unknown");
  const tone = BAD_OUTCOMES.has(outcome) ? "bad" : outcome === "passed" ? "good" : "";
  const facts = [];
  if (typeof test.duration_seconds === "number") facts.push(`${test.duration_seconds.toFixed(2)} s`);
  if (test.when) facts.push(`${outcome} in ${test.when}`);
  if (data.created_at) facts.push(`recorded ${when(data.created_at)}`);
  const retained = data.requests.length;
  const observed = data.total_observed ?? retained;
  const about = `A trace file: offline and read-only. ${retained} journal entr${retained === 1 ? "y" : "ies"} of ${observed} request${observed === 1 ? "" : "s"} observed${data.evicted_count ? `, ${data.evicted_count} evicted by the journal's limits` : ""}; server ${data.server_url || "unknown"}.`;
  const banner = h(
    "section",
    { id: "trace-banner", class: `trace-banner ${tone}`, "data-outcome": outcome, "aria-label": "traced test" },
    h(
      "div",
      { class: "trace-head" },
      h("span", { class: `badge ${tone}`, id: "trace-outcome" }, outcome),
      h("span", { class: "mono", id: "trace-test" }, test.nodeid || data.session.label || data.session.id),
      facts.length ? h("span", { class: "muted", id: "trace-facts" }, facts.join(" · ")) : null,
    ),
  );
  if (test.longrepr) {
    const text = typeof test.longrepr === "string" ? test.longrepr : JSON.stringify(test.longrepr, null, 2);
    banner.append(h("details", { id: "trace-longrepr" }, h("summary", {}, BAD_OUTCOMES.has(outcome) ? "Why it failed" : "Report"), h("pre", {}, text)));
  }
  banner.append(h("p", { class: "muted", id: "trace-about" }, about));
  return banner;
}

if (trace) document.querySelector("header.top").after(traceBanner(trace));
onUnauthorized(showLogin);
logoutButton.addEventListener("click", async () => {
  await api.logout().catch(() => {});
  route();
});
window.addEventListener("hashchange", route);
// "Log out" only where there is something to log out of: a server with a control key, logged in (never
// in a trace). When the state cannot be read there is nothing known to log out of: a 401 of the next
// control call shows the login form, which has its own way in.
try {
  const { data } = await api.loginState();
  logoutButton.hidden = !(data.key_required && data.logged_in);
} catch {
  logoutButton.hidden = true;
}
route();
