/**
 * The published JSON Schema files (schemas/*.schema.json), generated from the TypeBox
 * definitions by scripts/gen-schemas.mjs; tests/schemas.test.ts checks the checked-in files
 * equal this output.
 */
import { SettingsSchema } from "../kernel/settings-schema.js";
import { ModelsSchema } from "./models/models-schema.js";

const DRAFT = "https://json-schema.org/draft/2020-12/schema";

/** File name → file text. */
export function schemaFiles(): Record<string, string> {
  const doc = (schema: object) => JSON.stringify({ $schema: DRAFT, ...JSON.parse(JSON.stringify(schema)) }, null, 2) + "\n";
  return {
    "settings.schema.json": doc(SettingsSchema),
    "models.schema.json": doc(ModelsSchema),
  };
}
