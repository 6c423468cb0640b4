/**
 * The RPC input checker (modes/rpc/validate.ts) against TypeBox's own Value.Check, on the same
 * schema objects: they must agree on valid and invalid commands, and errors name the field.
 */
import { describe, it, expect } from "@jest/globals";
import { Value } from "typebox/value";
import { COMMANDS, ExtensionUiResponse, buildRpcSchema } from "../modes/rpc/commands.js";
import { buildChecker, validateInput } from "../modes/rpc/validate.js";

/** Small deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const samples: unknown[] = [
  "text",
  "",
  "steer",
  "followUp",
  "all",
  "one-at-a-time",
  "high",
  "image",
  0,
  1.5,
  -3,
  true,
  false,
  null,
  [],
  ["a"],
  [{ type: "image", data: "AAAA", mimeType: "image/png" }],
  [{ type: "image", data: 1, mimeType: "image/png" }],
  {},
  { a: 1 },
];

describe("RPC command validation", () => {
  it("builds a checker for every command schema (no unsupported keyword)", () => {
    for (const [type, schema] of Object.entries(COMMANDS)) {
      expect(() => buildChecker(schema as never, type)).not.toThrow();
    }
    expect(() => buildChecker(ExtensionUiResponse as never)).not.toThrow();
  });

  it("refuses a schema keyword it does not implement, naming it", () => {
    expect(() => buildChecker({ type: "string", pattern: "^a" })).toThrow(/"pattern"/);
  });

  it("agrees with TypeBox Value.Check on 6,000 random variations of every command", () => {
    const random = rng(42);
    const pick = <T>(a: T[]) => a[Math.floor(random() * a.length)]!;
    let valid = 0;
    let invalid = 0;
    for (let i = 0; i < 6000; i++) {
      const [type, schema] = pick(Object.entries(COMMANDS));
      const props = Object.keys((schema as unknown as { properties: Record<string, unknown> }).properties);
      const cmd: Record<string, unknown> = { type };
      for (const p of props) {
        if (p === "type") continue;
        if (random() < 0.6) cmd[p] = pick(samples);
      }
      if (random() < 0.3) cmd.id = pick(["r1", 7, true, null]);
      if (random() < 0.05) cmd.type = pick(["prompt", "nope", 3]);
      const ours = validateInput(cmd).ok;
      const theirs = Value.Check(COMMANDS[cmd.type as keyof typeof COMMANDS] ?? { not: {} }, cmd);
      if (ours !== theirs) throw new Error(`disagreement on ${JSON.stringify(cmd)}: ours ${ours}, typebox ${theirs}`);
      if (ours) valid++;
      else invalid++;
    }
    // Both outcomes were exercised.
    expect(valid).toBeGreaterThan(300);
    expect(invalid).toBeGreaterThan(300);
  });

  it("names the command and the bad field, and echoes the id", () => {
    expect(validateInput({ id: "a", type: "prompt" })).toEqual({ ok: false, id: "a", command: "prompt", error: 'prompt: missing required field "message"' });
    const wrong = validateInput({ id: 5, type: "prompt", message: "hi", streamingBehavior: "later" });
    expect(wrong).toMatchObject({ ok: false, id: 5, command: "prompt" });
    expect((wrong as { error: string }).error).toMatch(/"streamingBehavior" must be one of "steer", "followUp", got "later"/);
    const img = validateInput({ type: "steer", message: "x", images: [{ type: "image", data: "a", mimeType: 3 }] });
    expect((img as { error: string }).error).toMatch(/"images\[0\]\.mimeType" must be a string, got integer/);
    expect(validateInput({ id: "u", type: "fly" })).toMatchObject({ ok: false, id: "u", command: "fly", error: expect.stringMatching(/unknown command type "fly"/) });
    expect(validateInput({ message: "no type" })).toMatchObject({ ok: false, command: "unknown", error: expect.stringMatching(/"type"/) });
    expect(validateInput([1, 2])).toMatchObject({ ok: false, command: "unknown", error: expect.stringMatching(/JSON object/) });
    expect(validateInput({ type: "set_auto_retry", enabled: "yes" })).toMatchObject({ error: expect.stringMatching(/"enabled" must be a boolean, got string/) });
  });

  it("accepts extension_ui_response and checks its fields", () => {
    expect(validateInput({ type: "extension_ui_response", id: "x", value: "A" })).toMatchObject({ ok: true, kind: "ui_response" });
    expect(validateInput({ type: "extension_ui_response", value: "A" })).toMatchObject({ ok: false, error: expect.stringMatching(/"id"/) });
    expect(validateInput({ type: "extension_ui_response", id: "x", confirmed: "y" })).toMatchObject({ ok: false, error: expect.stringMatching(/"confirmed"/) });
  });

  it("the printed schema holds every command, response and event, all resolvable", () => {
    const doc = buildRpcSchema() as any;
    const json = JSON.parse(JSON.stringify(doc));
    expect(Object.keys(json.$defs.commands)).toEqual(expect.arrayContaining([...Object.keys(COMMANDS), "extension_ui_response"]));
    expect(json.$defs.responses.get_state.properties.data.required).toEqual(expect.arrayContaining(["sessionId", "thinkingLevel", "messageCount"]));
    expect(json.$defs.responses.abort.properties.data).toBeUndefined();
    expect(json.$defs.events.agent_settled.properties.aborted).toEqual({ type: "boolean" });
    for (const { $ref } of [...json.properties.input.anyOf, ...json.properties.output.anyOf]) {
      const [, , group, name] = $ref.split("/");
      expect(json.$defs[group][name]).toBeDefined();
    }
  });
});
