// Runs the extension in a real kernel against the scripted faux model: no API key, no network.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createExtensionHarness } from "{{HOST_NAME}}";

const extension = new URL("../src/index.ts", import.meta.url);

test("the model can call greet", async () => {
  const h = await createExtensionHarness({
    extensions: [extension],
    steps: [{ toolCalls: [{ name: "greet", arguments: { name: "Ada" } }] }, "Greeted Ada."],
  });
  try {
    await h.prompt("Please greet Ada");
    const [result] = h.toolResults();
    assert.equal(result.isError, false);
    assert.equal(result.content[0].text, "Hello, Ada!");
    assert.equal(h.lastAssistantText(), "Greeted Ada.");
    assert.deepEqual(h.diagnostics.filter((d) => d.level === "error"), []);
  } finally {
    await h.dispose();
  }
});

test("/greetings reports the count through the UI", async () => {
  const notes = [];
  const ui = { kind: "rpc", notify: (message) => notes.push(message) };
  const h = await createExtensionHarness({
    extensions: [extension],
    ui,
    steps: [{ toolCalls: [{ name: "greet", arguments: { name: "Bob" } }] }, "Done."],
  });
  try {
    await h.prompt("greet Bob");
    await h.prompt("/greetings");
    assert.deepEqual(notes, ["1 greeting(s) so far"]);
  } finally {
    await h.dispose();
  }
});
