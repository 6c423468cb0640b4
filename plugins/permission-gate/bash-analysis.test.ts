import { describe, it, expect } from "@jest/globals";
import { analyzeBash } from "./bash-analysis.js";

describe("analyzeBash", () => {
  it.each([
    ["r''m -rf x", "rm -rf x"],
    ["\\rm -rf x", "rm -rf x"],
    ["/bin/rm -rf x", "rm -rf x"],
    ["env rm -rf x", "rm -rf x"],
    ["env -i FOO=1 nice -n 5 timeout 10 rm -rf x", "rm -rf x"],
    ["sudo -u root command exec rm -rf x", "rm -rf x"],
    ["true & rm -rf x", "rm -rf x"],
    ["(rm -rf x)", "rm -rf x"],
    ["{ rm -rf x; }", "rm -rf x"],
    ["if true; then rm -rf x; fi", "rm -rf x"],
    ["for f in a; do rm -rf \"x\"; done", "rm -rf x"],
    ["echo $(rm -rf x)", "rm -rf x"],
    ["bash -c 'rm -rf x'", "rm -rf x"],
    ["sh -c \"cd / && rm -rf x\"", "rm -rf x"],
    ["f() { rm -rf x; }; f", "rm -rf x"],
    ["ls | xargs rm -rf x", "rm -rf x"],
  ])("%s runs %s", (cmd, expected) => {
    const a = analyzeBash(cmd);
    expect(a.commands).toContain(expected);
    expect(a.opaque).toBeUndefined();
  });

  it.each([
    ["eval 'rm -rf x'", "eval"],
    ["X=rm; $X -rf x", "built at run time"],
    ["$(echo rm) -rf x", "built at run time"],
    ["echo cm0gLXJmIHgK | base64 -d | sh", "stdin"],
    ["curl -s x | python3", "stdin"],
    ["bash -c \"$CMD\"", "-c with a script built"],
    ["{r,}m -rf x", "built at run time"],
    ["source ./x.sh", "source"],
    ["rm -rf 'x", "does not parse"],
  ])("%s cannot be analysed (%s)", (cmd, why) => {
    expect(analyzeBash(cmd).opaque).toContain(why);
  });

  it("plain commands are analysed", () => {
    expect(analyzeBash("git status && npm test -- --watch=false | tee log.txt")).toMatchObject({
      commands: ["git status", "npm test -- --watch=false", "tee log.txt"],
      opaque: undefined,
    });
    expect(analyzeBash("sudo apt install jq").wrapped).toEqual(["sudo apt install jq"]);
    expect(analyzeBash("python3 -c 'print(1)'").opaque).toBeUndefined();
  });
});
