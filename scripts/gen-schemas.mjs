#!/usr/bin/env node
/**
 * Writes schemas/settings.schema.json and schemas/models.schema.json from the TypeBox definitions
 * (core/kernel/settings-schema.ts, core/stores/models/models-schema.ts). Run after `npm run build`:
 *   node scripts/gen-schemas.mjs
 * tests/schemas.test.ts fails when the checked-in files differ from what this writes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { schemaFiles } = await import(join(root, "dist", "core", "stores", "schema-files.js"));
mkdirSync(join(root, "schemas"), { recursive: true });
for (const [name, text] of Object.entries(schemaFiles())) {
  writeFileSync(join(root, "schemas", name), text);
  console.log(`schemas/${name}`);
}
