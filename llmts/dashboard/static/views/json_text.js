// Scanning JSON values that sit back to back in a text (stream previews, realtime turns): no DOM.

/** The index after the JSON object or array starting at `start` (strings and escapes respected), or -1
 * when the text ends first. */
export function valueEnd(text, start) {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
