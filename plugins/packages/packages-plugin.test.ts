/**
 * The packages plugin's kernel services, with the resources plugin reading what they return.
 */
import { describe, it, expect, afterEach } from "@jest/globals";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestKernel } from "../../tests/helpers/test-kernel.js";
import type { Settings } from "../../core/kernel/index.js";
import resources from "../resources/index.js";
import packages from "./index.js";

let env: Awaited<ReturnType<typeof createTestKernel>> | undefined;
afterEach(() => {
  env?.cleanup();
  env = undefined;
});

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}
const skillMd = (name: string) => `---\nname: ${name}\ndescription: ${name} from a package\n---\nbody\n`;

describe("packages plugin services", () => {
  it("package-resources lists enabled resources of configured packages; resources loads them", async () => {
    env = await createTestKernel({
      plugins: [resources, packages],
      settings: { packages: ["../pkg", { source: "../pkg2", extensions: [] }, "../missing-pkg"] } as Partial<Settings>,
    });
    const root = join(env.agentDir, "..");
    write(join(root, "pkg", "package.json"), JSON.stringify({ name: "pkg", pi: { extensions: ["ext.ts"], skills: ["skills"] } }));
    write(join(root, "pkg", "ext.ts"), "export default () => {}");
    write(join(root, "pkg", "skills", "pkg-skill", "SKILL.md"), skillMd("pkg-skill"));
    write(join(root, "pkg2", "extensions", "off.ts"), "export default () => {}");
    write(join(root, "pkg2", "prompts", "p2.md"), "from pkg2");

    const resolve = env.kernel.service("package-resources")!;
    const r = await resolve();
    expect(r.extensions).toEqual([join(root, "pkg", "ext.ts")]);
    expect(r.skills).toEqual([join(root, "pkg", "skills", "pkg-skill", "SKILL.md")]);
    expect(r.prompts).toEqual([join(root, "pkg2", "prompts", "p2.md")]);
    const warn = env.kernel.diagnostics.list().find((d) => d.source === "packages" && d.message.includes("missing-pkg"));
    expect(warn?.level).toBe("warning");

    const res = env.kernel.service("resources")!;
    await res.ready();
    expect(res.skills().map((s) => s.name)).toEqual(["pkg-skill"]);
    expect(env.kernel.commands.get("p2")?.source).toBe("prompt");

    // Resolved once until a reload: a settings change is seen only after reload.
    env.kernel.settings.update({ packages: ["../pkg"] });
    expect((await resolve()).prompts).toEqual(r.prompts);
    expect((await resolve({ reload: true })).prompts).toEqual([]);
  });

  it("resolve-package-source returns a local package folder and its skills join the run", async () => {
    env = await createTestKernel({ plugins: [resources, packages] });
    const dir = join(env.agentDir, "..", "one-run");
    write(join(dir, "skills", "temp-skill", "SKILL.md"), skillMd("temp-skill"));
    write(join(dir, "index.ts"), "export default () => {}");
    const resolveSource = env.kernel.service("resolve-package-source")!;
    expect(await resolveSource(dir)).toBe(dir);
    await expect(resolveSource(join(dir, "nope"))).rejects.toThrow(/does not exist/);
    const paths = await env.kernel.service("package-resources")!();
    expect(paths.temporary.skills).toEqual([join(dir, "skills", "temp-skill", "SKILL.md")]);
    expect(paths.extensions).toEqual([]);
    const res = env.kernel.service("resources")!;
    await res.ready();
    expect(res.skills().map((s) => s.name)).toEqual(["temp-skill"]);
    // Nothing was written to settings.
    expect(env.kernel.settings.get().packages).toEqual([]);
  });

  it("registers the package subcommands", async () => {
    env = await createTestKernel({ plugins: [packages] });
    for (const name of ["install", "remove", "uninstall", "update", "list", "config"]) expect(env.kernel.subcommands.has(name)).toBe(true);
    const out: string[] = [];
    const err: string[] = [];
    const code = await env.kernel.subcommands.get("install")!.run([], { kernel: env.kernel, cwd: env.cwd, stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
    expect(code).toBe(1);
    expect(err.join("")).toContain("usage: pi install <source> [-l]");
    const code2 = await env.kernel.subcommands.get("config")!.run(["frobnicate"], { kernel: env.kernel, cwd: env.cwd, stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
    expect(code2).toBe(1);
    expect(err.join("")).toContain('unknown action "frobnicate"');
  });
});
