/**
 * Pattern compilation for the grep tool's in-process searcher: the regular expressions (global
 * for a whole text, single-line for a re-check) and a literal every match must contain, used as
 * a byte-level pre-filter before a file is decoded.
 */
export interface CompiledPattern {
  /** Global + multiline. */
  regex: RegExp;
  /** Same, not global: re-checks a single line. */
  lineRegex: RegExp;
  /** Bytes every match must contain (a fast pre-filter), when known. */
  needle?: Buffer;
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

/**
 * A literal that every match of `src` contains, or undefined. Conservative: only literal runs
 * at the top level of a pattern without alternation count.
 */
export function requiredLiteral(src: string): string | undefined {
  if (src.includes("|")) return undefined;
  let best = "";
  let cur = "";
  const flush = () => {
    if (cur.length > best.length) best = cur;
    cur = "";
  };
  const quantifierAt = (i: number) => src[i] === "*" || src[i] === "?" || src[i] === "{";
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "\\") {
      const n = src[i + 1];
      if (n === undefined) return undefined;
      if (/[A-Za-z0-9]/.test(n)) {
        // class or special escape: \d \w \s \b \p{..} \x41 \u{..} \k<..> \cX, back-references
        flush();
        i++;
        if ((n === "p" || n === "P" || n === "u" || n === "x") && src[i + 1] === "{") {
          const e = src.indexOf("}", i + 1);
          i = e < 0 ? src.length : e;
        } else if (n === "x") i += 2;
        else if (n === "u") i += 4;
        else if (n === "c") i += 1;
        else if (n === "k" && src[i + 1] === "<") {
          const e = src.indexOf(">", i + 1);
          i = e < 0 ? src.length : e;
        }
        if (quantifierAt(i + 1) || src[i + 1] === "+") flush();
        continue;
      }
      i++;
      if (quantifierAt(i + 1)) {
        flush();
        continue;
      }
      cur += n;
      if (src[i + 1] === "+") flush();
      continue;
    }
    if (c === "[") {
      flush();
      let j = i + 1;
      if (src[j] === "^") j++;
      if (src[j] === "]") j++;
      for (; j < src.length && src[j] !== "]"; j++) if (src[j] === "\\") j++;
      i = j;
      continue;
    }
    if (c === "(") {
      flush();
      let depth = 1;
      let j = i + 1;
      for (; j < src.length && depth > 0; j++) {
        if (src[j] === "\\") j++;
        else if (src[j] === "[") {
          for (j++; j < src.length && src[j] !== "]"; j++) if (src[j] === "\\") j++;
        } else if (src[j] === "(") depth++;
        else if (src[j] === ")") depth--;
      }
      i = j - 1;
      continue;
    }
    if (".^$*+?{}|)]".includes(c)) {
      flush();
      continue;
    }
    if (quantifierAt(i + 1)) {
      flush();
      continue;
    }
    cur += c;
    if (src[i + 1] === "+") flush();
  }
  flush();
  return best || undefined;
}

/** Translate a ripgrep-style pattern to a JavaScript RegExp (global, multiline). */
export function compilePattern(pattern: string, opts: { ignoreCase?: boolean; literal?: boolean }): CompiledPattern {
  let flags = "gm";
  if (opts.ignoreCase) flags += "i";
  if (opts.literal) {
    const regex = new RegExp(escapeRegExp(pattern), flags);
    return {
      regex,
      lineRegex: new RegExp(regex.source, flags.replace("g", "")),
      needle: !opts.ignoreCase && pattern.length > 0 ? Buffer.from(pattern, "utf8") : undefined,
    };
  }
  let src = pattern;
  // Leading inline flags, as Rust's regex and PCRE accept them: (?i), (?s), (?is)…
  const inline = /^\(\?([imsU]+)\)/.exec(src);
  if (inline) {
    src = src.slice(inline[0].length);
    if (inline[1]!.includes("i") && !flags.includes("i")) flags += "i";
    if (inline[1]!.includes("s")) flags += "s";
  }
  // Named groups: Rust/Python spelling.
  src = src.replace(/\(\?P</g, "(?<");
  const wantsUnicode = /\\[pP]\{|\\u\{/.test(src);
  const tries = wantsUnicode ? [flags + "u", flags] : [flags, flags + "u"];
  let regex: RegExp | undefined;
  let firstError: unknown;
  for (const f of tries) {
    try {
      regex = new RegExp(src, f);
      break;
    } catch (e) {
      firstError ??= e;
    }
  }
  if (!regex) {
    const msg = firstError instanceof Error ? firstError.message.replace(/^Invalid regular expression: /, "") : String(firstError);
    throw new Error(`Invalid regular expression ${JSON.stringify(pattern)}: ${msg}. Use literal=true to search for the text as is.`);
  }
  const lit = flags.includes("i") ? undefined : requiredLiteral(src);
  return {
    regex,
    lineRegex: new RegExp(regex.source, regex.flags.replace("g", "")),
    needle: lit && lit.length >= 2 ? Buffer.from(lit, "utf8") : undefined,
  };
}
