import { describe, it, expect } from "@jest/globals";
import { keyFromData, parseKey, parseMouse, splitInput } from "./key-parser.js";

const ids = (data: string) => splitInput(data).map((t) => parseKey(t)?.id ?? null);

describe("key parser", () => {
  it("splits a chunk into keys and sequences", () => {
    expect(splitInput("ab\x1b[A\x1b[13;2u\x1bx\x1b")).toEqual(["a", "b", "\x1b[A", "\x1b[13;2u", "\x1bx", "\x1b"]);
    expect(splitInput("🎉\x1bOA\x1b]7501;?\x1b\\c")).toEqual(["🎉", "\x1bOA", "\x1b]7501;?\x1b\\", "c"]);
    expect(splitInput("\x1b\x1b[A")).toEqual(["\x1b", "\x1b[A"]);
  });

  it("reads legacy keys", () => {
    expect(ids("\r\n\t\x7f\x01\x1b[Z A")).toEqual(["enter", "ctrl+j", "tab", "backspace", "ctrl+a", "shift+tab", "space", "shift+a"]);
    expect(ids("\x1b\r\x1b\x7f\x1bb")).toEqual(["alt+enter", "alt+backspace", "alt+b"]);
    expect(ids("\x1b[1;5H\x1b[1;5F\x1b[5~\x1b[3;3~\x1b[1;3A\x1bOB")).toEqual(["ctrl+home", "ctrl+end", "pageUp", "alt+delete", "alt+up", "down"]);
    expect(parseKey("?")).toMatchObject({ id: "?", text: "?" });
    expect(parseKey("你")).toMatchObject({ id: "你", text: "你" });
  });

  it("reads the kitty protocol's CSI-u keys and drops key releases", () => {
    expect(parseKey("\x1b[13;2u")).toMatchObject({ id: "shift+enter", text: undefined });
    expect(parseKey("\x1b[13;3u")?.id).toBe("alt+enter");
    expect(parseKey("\x1b[102;6u")?.id).toBe("ctrl+shift+f");
    expect(parseKey("\x1b[97;5u")?.id).toBe("ctrl+a");
    expect(parseKey("\x1b[27u")?.id).toBe("escape");
    expect(parseKey("\x1b[97;2u")).toMatchObject({ id: "shift+a", text: "A" });
    expect(parseKey("\x1b[47:63;2u")).toMatchObject({ id: "?", text: "?" });
    expect(parseKey("\x1b[107;9u")?.id).toBe("super+k");
    expect(parseKey("\x1b[13;2:3u")).toBeUndefined();
    expect(parseKey("\x1b[13;2:2u")?.id).toBe("shift+enter");
    expect(parseKey("\x1b[97;69u")?.id).toBe("ctrl+a"); // caps lock ignored
  });

  it("reads xterm modifyOtherKeys keys", () => {
    expect(parseKey("\x1b[27;2;13~")?.id).toBe("shift+enter");
    expect(parseKey("\x1b[27;5;13~")?.id).toBe("ctrl+enter");
    expect(parseKey("\x1b[27;6;70~")?.id).toBe("ctrl+shift+f");
  });

  it("leaves terminal replies, focus reports and mouse reports alone", () => {
    expect(parseKey("\x1b[?1;2c")).toBeUndefined();
    expect(parseKey("\x1b[?7u")).toBeUndefined();
    expect(parseKey("\x1b[I")).toBeUndefined();
    expect(parseKey("\x1b[<64;10;5M")).toBeUndefined();
  });

  it("reads SGR mouse reports", () => {
    expect(parseMouse("\x1b[<64;10;5M")).toMatchObject({ kind: "wheelUp", x: 10, y: 5 });
    expect(parseMouse("\x1b[<65;1;2M")).toMatchObject({ kind: "wheelDown" });
    expect(parseMouse("\x1b[<72;1;2M")).toMatchObject({ kind: "wheelUp", alt: true });
    expect(parseMouse("\x1b[<0;3;4M")).toMatchObject({ kind: "press", button: 0, x: 3, y: 4 });
    expect(parseMouse("\x1b[<32;5;4M")).toMatchObject({ kind: "drag", button: 0 });
    expect(parseMouse("\x1b[<0;5;4m")).toMatchObject({ kind: "release" });
    expect(parseMouse("\x1b[A")).toBeUndefined();
  });

  it("gives components' raw data a key string", () => {
    expect(keyFromData("\x1b[A")).toBe("up");
    expect(keyFromData("\x01")).toBe("ctrl+a");
    expect(keyFromData("\x1b[13;2u")).toBe("shift+enter");
    expect(keyFromData("ab")).toBeUndefined();
  });
});
