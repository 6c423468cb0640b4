import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectServers, expandEnv, hasAnyServer, MissingEnvError, parseServer, readMcpJson, specKey, type CollectInput } from "./config.js";

const ctx = (env: NodeJS.ProcessEnv = {}) => ({ scope: "user" as const, source: "/agent/settings.json", baseDir: "/proj", env });

describe("expandEnv", () => {
  it("expands ${VAR} and ${VAR:-default}", () => {
    const env = { TOKEN: "abc", EMPTY: "" };
    expect(expandEnv("Bearer ${TOKEN}", env, "x")).toBe("Bearer abc");
    expect(expandEnv("${MISSING:-fallback}/${TOKEN}", env, "x")).toBe("fallback/abc");
    expect(expandEnv("${EMPTY:-d}", env, "x")).toBe("d");
    expect(expandEnv("[${EMPTY}]", env, "x")).toBe("[]");
    expect(expandEnv("$TOKEN stays", env, "x")).toBe("$TOKEN stays");
  });

  it("an unset variable without a default names the variable and the place", () => {
    expect(() => expandEnv("${NOPE_123}", {}, "headers.Authorization")).toThrow(MissingEnvError);
    expect(() => expandEnv("${NOPE_123}", {}, "headers.Authorization")).toThrow(/NOPE_123.*headers\.Authorization/);
  });
});

describe("parseServer", () => {
  it("a stdio server: command, args, env and cwd, expanded", () => {
    const e = parseServer("files", { command: "${BIN:-node}", args: ["srv.js", "--port", 3], env: { KEY: "${K}" }, cwd: "sub" }, ctx({ K: "v1" }));
    expect(e.state).toBe("ok");
    expect(e.spec).toMatchObject({ transport: "stdio", command: "node", args: ["srv.js", "--port", "3"], env: { KEY: "v1" }, cwd: "/proj/sub" });
  });

  it("a url server: http with SSE fallback unless a type is given", () => {
    const auto = parseServer("web", { url: "https://h/mcp", headers: { Authorization: "Bearer ${T}" } }, ctx({ T: "t" }));
    expect(auto.spec).toMatchObject({ transport: "http", fallbackToSse: true, url: "https://h/mcp", headers: { Authorization: "Bearer t" } });
    expect(parseServer("w", { type: "http", url: "http://h" }, ctx()).spec).toMatchObject({ transport: "http", fallbackToSse: false });
    expect(parseServer("w", { type: "sse", url: "http://h" }, ctx()).spec).toMatchObject({ transport: "sse", fallbackToSse: false });
  });

  it("misconfigurations are invalid with a reason, never thrown", () => {
    const cases: Array<[unknown, RegExp]> = [
      ["x", /must be an object/],
      [{}, /needs a "command".*or a "url"/],
      [{ command: "a", url: "http://h" }, /both "command" and "url"/],
      [{ command: "" }, /non-empty/],
      [{ command: "a", args: "b" }, /"args" must be an array/],
      [{ command: "a", env: { A: {} } }, /"env\.A" must be a string/],
      [{ url: "ftp://h" }, /http:\/\/ or https:\/\//],
      [{ url: "not a url" }, /not a valid URL/],
      [{ type: "websocket", url: "http://h" }, /unknown "type"/],
      [{ type: "sse", command: "x" }, /needs a "url"/],
      [{ url: "http://h/${UNSET_VAR_XYZ}" }, /UNSET_VAR_XYZ is not set \(used in url\)/],
    ];
    for (const [raw, re] of cases) {
      const e = parseServer("s", raw, ctx());
      expect(e.state).toBe("invalid");
      expect(e.problem).toMatch(re);
    }
    expect(parseServer("bad name!", { command: "x" }, ctx()).problem).toMatch(/server name/);
  });

  it("disabled servers stay listed but off", () => {
    expect(parseServer("s", { command: "x", disabled: true }, ctx()).state).toBe("disabled");
    expect(parseServer("s", { command: "x", enabled: false }, ctx()).state).toBe("disabled");
  });

  it("specKey changes with the configuration", () => {
    const a = parseServer("s", { command: "x", args: ["1"] }, ctx()).spec;
    const b = parseServer("s", { command: "x", args: ["2"] }, ctx()).spec;
    expect(specKey(a)).not.toBe(specKey(b));
    expect(specKey(a)).toBe(specKey(parseServer("s", { command: "x", args: ["1"] }, ctx()).spec));
  });
});

describe("collectServers", () => {
  const base = (over: Partial<CollectInput>): CollectInput => ({ cwd: "/proj", env: {}, trusted: false, trustHint: "HINT", ...over });

  it("project servers replace user servers of the same name when trusted", () => {
    const c = collectServers(
      base({
        trusted: true,
        user: { servers: { a: { command: "user-a" }, b: { command: "user-b" } }, path: "/agent/settings.json" },
        mcpJson: { path: "/proj/.mcp.json", servers: { a: { command: "proj-a" } } },
      }),
    );
    expect(c.entries.map((e) => [e.name, e.spec?.command, e.scope])).toEqual([
      ["a", "proj-a", "project"],
      ["b", "user-b", "user"],
    ]);
    expect(c.projectTrusted).toBe(true);
    expect(c.diagnostics.some((d) => d.level === "info" && /replaces/.test(d.message))).toBe(true);
  });

  it("untrusted project servers are skipped with the trust hint; a user server of that name stays", () => {
    const c = collectServers(
      base({
        user: { servers: { a: { command: "user-a" } }, path: "/agent/settings.json" },
        projectSettings: { servers: { p: { command: "proj-p" } }, path: "/proj/.pi/settings.json" },
        mcpJson: { path: "/proj/.mcp.json", servers: { a: { command: "evil" }, q: { url: "http://h" } } },
      }),
    );
    const byName = Object.fromEntries(c.entries.map((e) => [e.name, e]));
    expect(byName.a!.spec?.command).toBe("user-a");
    expect(byName.p!.state).toBe("untrusted");
    expect(byName.q!.state).toBe("untrusted");
    expect(byName.q!.spec).toBeUndefined();
    const warn = c.diagnostics.find((d) => /skipped 2 project MCP servers/.test(d.message));
    expect(warn?.message).toContain("HINT");
    expect(c.diagnostics.some((d) => /"a" in \/proj\/\.mcp\.json is ignored/.test(d.message))).toBe(true);
  });

  it("a broken .mcp.json is one error and no servers", () => {
    const c = collectServers(base({ mcpJson: { path: "/proj/.mcp.json", error: "malformed JSON at line 1, column 2" } }));
    expect(c.entries).toEqual([]);
    expect(c.diagnostics[0]!.message).toMatch(/\.mcp\.json: malformed JSON/);
  });

  it("invalid servers produce an error diagnostic naming them", () => {
    const c = collectServers(base({ user: { servers: { broken: { args: [] } }, path: "/agent/settings.json" } }));
    expect(c.entries[0]!.state).toBe("invalid");
    expect(c.diagnostics.find((d) => d.level === "error")?.message).toMatch(/"broken".*misconfigured/);
  });

  it("hasAnyServer", () => {
    expect(hasAnyServer({})).toBe(false);
    expect(hasAnyServer({ user: { servers: {}, path: "x" } })).toBe(false);
    expect(hasAnyServer({ user: { servers: { a: {} }, path: "x" } })).toBe(true);
    expect(hasAnyServer({ mcpJson: { path: "x", error: "bad" } })).toBe(true);
  });
});

describe("readMcpJson", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads mcpServers, reports malformed JSON with a position, and is undefined without a file", () => {
    dir = mkdtempSync(join(tmpdir(), "mcp-json-"));
    expect(readMcpJson(dir)).toBeUndefined();
    writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { a: { command: "x" } } }));
    expect(readMcpJson(dir)!.servers).toEqual({ a: { command: "x" } });
    writeFileSync(join(dir, ".mcp.json"), '{\n  "mcpServers": {,}\n}');
    expect(readMcpJson(dir)!.error).toMatch(/malformed JSON at line 2/);
    writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: [] }));
    expect(readMcpJson(dir)!.error).toMatch(/must be an object/);
  });
});
