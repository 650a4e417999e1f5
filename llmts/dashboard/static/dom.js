// DOM helpers. Every piece of data becomes a text node or an attribute value: nothing here parses HTML,
// so request content (user input) is shown literally and never runs (docs/dashboard.md, "Escaping and
// Content Security Policy").

const SVG_NS = "http://www.w3.org/2000/svg";

function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "class") el.setAttribute("class", value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("td", {class: "num"}, "text", otherNode). Strings become text nodes. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  return append(el, children);
}

/** An SVG element, the same way. */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  return append(el, children);
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** A link inside the page: the hash is built from encoded parts only. */
export function link(parts, text, attrs = {}) {
  const hash = "#/" + parts.map((part) => encodeURIComponent(String(part))).join("/");
  return h("a", { href: hash, ...attrs }, text);
}

export function sessionHash(sessionId, view, query) {
  let hash = `#/sessions/${encodeURIComponent(sessionId)}/${view}`;
  if (query) {
    const params = new URLSearchParams(query).toString();
    if (params) hash += `?${params}`;
  }
  return hash;
}

/** Pretty-printed JSON when the text is JSON, else the text itself. */
export function pretty(text) {
  if (text === null || text === undefined) return "";
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function bytes(count) {
  if (count < 1024) return `${count} B`;
  if (count < 1024 * 1024) return `${(count / 1024).toFixed(1)} KiB`;
  return `${(count / (1024 * 1024)).toFixed(1)} MiB`;
}

export function clock(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().slice(11, 23);
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return date.toISOString().replace("T", " ").slice(0, 19) + "Z";
}

export function errorText(error) {
  const body = error && error.body;
  if (body && typeof body === "object" && body.error) {
    const details = (body.error.details || []).map((d) => `${d.path}: ${d.message}`).join("; ");
    return `${body.error.code}: ${body.error.message}${details ? ` (${details})` : ""}`;
  }
  return String((error && error.message) || error);
}

/** Append rows in slices, one animation frame each, so a long list never blocks the page. */
export function appendInSlices(parent, items, build, slice = 50) {
  let index = 0;
  let cancelled = false;
  const step = () => {
    if (cancelled) return;
    const fragment = document.createDocumentFragment();
    for (const end = Math.min(index + slice, items.length); index < end; index += 1) {
      fragment.append(build(items[index]));
    }
    parent.append(fragment);
    if (index < items.length) requestAnimationFrame(step);
  };
  step();
  return () => {
    cancelled = true;
  };
}
