// Lint: unused code only (variables, imports, parameters, private members, labels), on the
// TypeScript source and tests. Types are checked by tsc (npm run typecheck), style by nobody.
import tseslint from "typescript-eslint";

export default [
  { ignores: ["dist/**", "node_modules/**", "templates/**", "tests/fixtures/**", "**/*.d.ts"] },
  {
    files: ["**/*.ts", "**/*.mts"],
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          vars: "all",
          args: "after-used",
          caughtErrors: "none",
          ignoreRestSiblings: true,
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
        },
      ],
      "no-unused-private-class-members": "error",
      "no-unused-labels": "error",
    },
  },
];
