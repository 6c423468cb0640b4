/** Jest 30 in ESM mode with @swc/jest: TypeScript sources run untranspiled-by-tsc. */
export default {
  testEnvironment: "node",
  roots: ["<rootDir>/core", "<rootDir>/plugins", "<rootDir>/modes", "<rootDir>/sdk", "<rootDir>/tests"],
  testMatch: ["**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/dist/", "/templates/", "/tests/faults/"],
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: {
    "^.+\\.(t|j)sx?$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } },
    ],
  },
  setupFilesAfterEnv: ["<rootDir>/tests/helpers/jest-tmp.ts"],
  // A guard, not a speed target: tests wait for conditions, and a busy machine may be slow.
  testTimeout: 180000,
  maxWorkers: 2,
};
