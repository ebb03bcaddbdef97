/**
 * The production store's documentation prints JSON with a comma after the last member of an
 * object (`"timestamp":"1443110236",}` in its sweep status examples, and one before `]` in its
 * text-write example). Clients parse such status answers; the node names the comma when a body
 * fails only because of one. Nothing else about JSON is loosened.
 */

/**
 * The text with every trailing comma removed: a comma that follows a complete value and is
 * followed (after whitespace) by `}` or `]`. Commas inside strings are left alone, and so is any
 * other misplaced comma (`{,}`, `[1,,]`), so the result still fails JSON.parse when the text
 * was broken in any other way. Returns undefined when there was no trailing comma to remove.
 */
export function withoutTrailingCommas(text: string): string | undefined {
  let out = '';
  let from = 0;
  let inString = false;
  // Whether the last significant character outside strings ends a value (a string, number,
  // literal, `}` or `]`): only then can a comma be the harmless trailing kind.
  let afterValue = false;
  let removed = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) {
        inString = false;
        afterValue = true;
      }
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    if (c === 0x2c /* , */ && afterValue) {
      let j = i + 1;
      while (j < text.length && /[ \n\r\t]/.test(text[j]!)) j++;
      const next = text.charCodeAt(j);
      if (next === 0x7d /* } */ || next === 0x5d /* ] */) {
        out += text.slice(from, i);
        from = i + 1;
        removed = true;
        continue;
      }
    }
    afterValue = c === 0x7d || c === 0x5d || (c >= 0x30 && c <= 0x39) || c === 0x65 /* true/false */ || c === 0x6c; /* null */
  }
  return removed ? out + text.slice(from) : undefined;
}

/**
 * JSON.parse, and when that fails only because of trailing commas, the value without them.
 * Throws JSON.parse's own SyntaxError for anything else.
 */
export function parseJsonAllowingTrailingCommas(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const fixed = withoutTrailingCommas(text);
    if (fixed === undefined) throw err;
    try {
      return JSON.parse(fixed);
    } catch {
      throw err;
    }
  }
}
