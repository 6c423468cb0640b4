import { describe, it, expect } from "@jest/globals";
import { WheelSpeed } from "./viewport.js";

describe("wheel speed (fullscreenWheelScrollLines auto)", () => {
  it("moves one line for a lone step and more for a fast spin, at most six", () => {
    const w = new WheelSpeed(true);
    expect(w.lines(1, 1000)).toBe(1); // a lone step
    expect(w.lines(1, 1100)).toBe(1); // 100 ms apart: one line
    expect(w.lines(1, 1150)).toBe(1); // average gap 75 ms: 1.33 → 1, carry
    const fast: number[] = [];
    for (let t = 1160; t < 1260; t += 10) fast.push(w.lines(1, t));
    expect(Math.max(...fast)).toBe(6);
    expect(w.lines(-1, 1265)).toBe(1); // a change of direction starts a new gesture
    expect(w.lines(-1, 1267)).toBe(1); // closer than 5 ms: one notch reported twice
    expect(w.lines(-1, 2000)).toBe(1); // after a pause
  });

  it("is one line per step where the terminal accelerates the wheel itself", () => {
    const w = new WheelSpeed(false);
    for (let t = 0; t < 100; t += 10) expect(w.lines(1, t)).toBe(1);
  });
});
