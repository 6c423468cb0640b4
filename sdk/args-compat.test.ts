import { describe, it, expect } from "@jest/globals";
import { likelySubcommandTypo, unknownFlagMessage } from "./args.js";

describe("unknown input", () => {
  it("names the closest flag and spots subcommand typos but not ordinary words", () => {
    expect(unknownFlagMessage("--modle", [{ name: "model", type: "string", description: "" }, { name: "print", type: "boolean", description: "" }])).toBe("unknown option --modle (closest known option: --model; see --help)");
    const subs = ["auth", "mcp", "install", "update", "list", "config"];
    expect(likelySubcommandTypo("auht", subs)).toBe("auth");
    expect(likelySubcommandTypo("instal", subs)).toBe("install");
    expect(likelySubcommandTypo("auth", subs)).toBeUndefined();
    expect(likelySubcommandTypo("explain", subs)).toBeUndefined();
    expect(likelySubcommandTypo("Fix the bug", subs)).toBeUndefined();
    expect(likelySubcommandTypo("first", subs)).toBeUndefined(); // two edits from "list": an ordinary word
  });
});
