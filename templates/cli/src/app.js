// @ts-check
/**
 * The CLI's name and project folder, in one place: the binary (bin/cli.js) reads them before the
 * agent loads, src/cli.js gives them to createCli(). Keep this file free of imports.
 */
export const app = {
  name: "{{NAME}}",
  configDir: ".{{NAME}}",
};
