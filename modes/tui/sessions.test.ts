import { describe, it, expect } from "@jest/globals";
import { filterSessions } from "./sessions.js";

const items = [
  { label: "a", searchText: "fix the login bug\nin auth.ts" },
  { label: "b", searchText: "the bug in login\nlater" },
  { label: "c", searchText: "write docs" },
];
const labels = (q: string) => filterSessions(items, q).map((i) => i.label);

describe("session search", () => {
  it("every word must appear, in any order", () => {
    expect(labels("login bug")).toEqual(["a", "b"]);
    expect(labels("DOCS")).toEqual(["c"]);
  });

  it('"a phrase" in quotes must appear as written (spaces and case aside)', () => {
    expect(labels('"login bug"')).toEqual(["a"]);
    expect(labels('"bug in login" the')).toEqual(["b"]);
    expect(labels('"login bug')).toEqual(["a", "b"]); // unclosed: words
  });

  it("re:<pattern> is a regular expression (case-insensitive); an invalid one matches nothing", () => {
    expect(labels("re:login\\s+bug")).toEqual(["a"]);
    expect(labels("re:^WRITE")).toEqual(["c"]);
    expect(labels("re:(unclosed")).toEqual([]);
  });
});
