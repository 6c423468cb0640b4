import { describe, it, expect } from "@jest/globals";
import { branchPrefixes, branchStep, canFold, labelTime, listShape, unfoldedRows, type NavRow } from "./tree-model.js";

// root → a → (b → c) | (d → e)
const rows: NavRow[] = [
  { id: "root", parentId: null },
  { id: "a", parentId: "root" },
  { id: "b", parentId: "a" },
  { id: "c", parentId: "b" },
  { id: "d", parentId: "a" },
  { id: "e", parentId: "d" },
];
const at = (id: string, list = rows) => list.findIndex((r) => r.id === id);

describe("tree navigation", () => {
  it("folding a row hides everything under it", () => {
    expect(unfoldedRows(rows, new Set(["b"])).map((r) => r.id)).toEqual(["root", "a", "b", "d", "e"]);
    expect(unfoldedRows(rows, new Set(["root"])).map((r) => r.id)).toEqual(["root"]);
  });

  it("a root and a branch's first row fold; a row inside a branch and a leaf do not", () => {
    const shape = listShape(rows, rows);
    expect(canFold("root", shape)).toBe(true);
    expect(canFold("b", shape)).toBe(true);
    expect(canFold("a", shape)).toBe(false);
    expect(canFold("c", shape)).toBe(false);
  });

  it("down goes to the next branch start, else the branch's end; up to the start of the branch, else the root", () => {
    const shape = listShape(rows, rows);
    expect(branchStep("down", at("root"), rows, shape)).toBe(at("b"));
    expect(branchStep("down", at("b"), rows, shape)).toBe(at("c"));
    expect(branchStep("up", at("e"), rows, shape)).toBe(at("d"));
    expect(branchStep("up", at("d"), rows, shape)).toBe(at("root"));
    expect(branchStep("up", at("c"), rows, shape)).toBe(at("b"));
  });

  it("an ancestor the list does not show is skipped to the next one it shows", () => {
    const shown = rows.filter((r) => r.id !== "a");
    const shape = listShape(shown, rows);
    expect(shape.parent.get("b")).toBe("root");
    expect(branchStep("down", at("root", shown), shown, shape)).toBe(at("b", shown));
  });

  it("label times: the time today, month/day this year, year/month/day before", () => {
    const now = new Date(2026, 5, 10, 18, 0);
    expect(labelTime(new Date(2026, 5, 10, 9, 5).toISOString(), now)).toBe("09:05");
    expect(labelTime(new Date(2026, 2, 9, 14, 30).toISOString(), now)).toBe("3/9 14:30");
    expect(labelTime(new Date(2024, 11, 1, 7, 0).toISOString(), now)).toBe("24/12/1 07:00");
    expect(labelTime("not a time", now)).toBe("");
  });
});

describe("branchPrefixes", () => {
  it("draws connectors under a branch point, rails while siblings follow, and fold marks in the connector", () => {
    // r → a; a branches into b (→ c) and d (→ e).
    const rows = [
      { id: "r", parentId: null },
      { id: "a", parentId: "r" },
      { id: "b", parentId: "a" },
      { id: "c", parentId: "b" },
      { id: "d", parentId: "a" },
      { id: "e", parentId: "d" },
    ];
    const p = branchPrefixes(rows, rows, (id) => (id === "b" || id === "d" ? "foldable" : undefined));
    expect(rows.map((r) => p.get(r.id)?.prefix)).toEqual(["", "", "├⊟ ", "│     ", "└⊟ ", "      "]);
    const folded = branchPrefixes(rows.filter((r) => r.id !== "c"), rows, (id) => (id === "b" ? "folded" : undefined));
    expect(folded.get("b")?.prefix).toBe("├⊞ ");
    expect(folded.get("d")?.prefix).toBe("└─ ");
  });
});
