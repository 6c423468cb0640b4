import { describe, it, expect } from "@jest/globals";
import { explainCommandFailure, installCommandWrapper, runUnwrapped, wrapCommand, type CommandSpec } from "./command-wrapper.js";

const spec: CommandSpec = { file: "/bin/sh", args: ["-c", "true"], cwd: "/", env: {} };

describe("command wrapper", () => {
  it("the newest wrapper that takes a command decides; one that passes does not un-confine another", () => {
    const a = installCommandWrapper({ source: "a", wrap: (s) => ({ ...s, file: "box-a", args: [s.file, ...s.args] }), explain: () => "from a" });
    const b = installCommandWrapper({ source: "b", wrap: () => undefined });
    try {
      expect(wrapCommand(spec, "bash")).toMatchObject({ file: "box-a", args: ["/bin/sh", "-c", "true"] });
      expect(explainCommandFailure("x")).toBe("from a");
    } finally {
      b();
      a();
    }
    expect(wrapCommand(spec, "bash")).toBe(spec);
  });

  it("runUnwrapped skips wrappers, also across awaits; a refusal throws", async () => {
    const off = installCommandWrapper({ source: "r", wrap: () => { throw new Error("refused: no sandbox"); } });
    try {
      expect(() => wrapCommand(spec, "exec")).toThrow("refused: no sandbox");
      const inside = await runUnwrapped(async () => {
        await new Promise((r) => setTimeout(r, 1));
        return wrapCommand(spec, "exec");
      });
      expect(inside).toBe(spec);
      expect(() => wrapCommand(spec, "exec")).toThrow("refused");
    } finally {
      off();
    }
  });
});
