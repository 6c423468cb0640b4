// Loads the plugin into a real kernel (the way `{{APP}} -e ./src/index.ts` does) with the scripted
// faux model: no API key, no network.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createExtensionHarness } from "{{HOST_NAME}}";

const plugin = new URL("../src/index.ts", import.meta.url);

test("the model calls word_count", async () => {
  const h = await createExtensionHarness({
    extensions: [plugin],
    steps: [{ toolCalls: [{ name: "word_count", arguments: { text: "one two three" } }] }, "Three words."],
  });
  try {
    await h.prompt("count: one two three");
    const [result] = h.toolResults();
    assert.equal(result.isError, false);
    assert.equal(result.content[0].text, "3 words");
    assert.equal(h.lastAssistantText(), "Three words.");
    assert.deepEqual(h.diagnostics.filter((d) => d.level === "error"), []);
  } finally {
    await h.dispose();
  }
});

test("bash may not run rm -rf /", async () => {
  const h = await createExtensionHarness({
    extensions: [plugin],
    steps: [{ toolCalls: [{ name: "bash", arguments: { command: "rm -rf /" } }] }, "Refused."],
  });
  try {
    await h.prompt("clean up everything");
    const [result] = h.toolResults();
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /does not allow rm -rf \//);
  } finally {
    await h.dispose();
  }
});

test("/{{NAME}} reports the count through the UI", async () => {
  const notes = [];
  const h = await createExtensionHarness({
    extensions: [plugin],
    ui: { kind: "rpc", notify: (message) => notes.push(message) },
    steps: [{ toolCalls: [{ name: "word_count", arguments: { text: "a b" } }] }, "Done."],
  });
  try {
    await h.prompt("count a b");
    await h.prompt("/{{NAME}}");
    assert.deepEqual(notes, ["2 words counted"]);
  } finally {
    await h.dispose();
  }
});
