/**
 * Input validation for RPC commands, derived from the TypeBox schemas in commands.ts.
 *
 * TypeBox schemas are plain JSON Schema objects; this walks the small subset the command
 * definitions use (type, const, enum, anyOf, properties, required, additionalProperties, items,
 * minimum/maximum, minLength/maxLength) and turns each into a checker closure once, on first use.
 * Any other keyword is refused when the checker is built, so a schema that grows beyond the
 * subset fails loudly (tests build every checker) instead of being silently half-checked.
 * Loading `typebox/compile` would cost ~200 ms of start-up; this costs nothing measurable.
 *
 * Errors name the field: `field "images[0].mimeType" must be a string, got number`.
 */
import { COMMANDS, ExtensionUiResponse, type RpcCommand, type RpcCommandType, type RpcExtensionUiResponse } from "./commands.js";

/** Returns an error message for `value` at `path`, or undefined when it fits. */
type Check = (value: unknown, path: string) => string | undefined;

const ANNOTATIONS = new Set(["description", "title", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"]);
const SUPPORTED = new Set([
  ...ANNOTATIONS,
  "type",
  "const",
  "enum",
  "anyOf",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
]);

/** JSON-ish name of a value's type, for messages. */
export function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 60 ? s.slice(0, 57) + "..." : s;
}

function fieldName(path: string): string {
  return path ? `field "${path}"` : "the command";
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "undefined":
      return value === undefined;
    default:
      return false;
  }
}

/** Builds the checker for one schema. Throws on keywords outside the supported subset. */
export function buildChecker(schema: Record<string, unknown>, where = "schema"): Check {
  for (const key of Object.keys(schema)) {
    if (!SUPPORTED.has(key)) throw new Error(`rpc validate: ${where} uses the JSON Schema keyword "${key}", which the RPC checker does not support`);
  }
  const checks: Check[] = [];
  const type = schema.type as string | string[] | undefined;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    checks.push((v, p) => (types.some((t) => hasType(v, t)) ? undefined : `${fieldName(p)} must be ${types.map(article).join(" or ")}, got ${typeName(v)}`));
  }
  if ("const" in schema) {
    const c = schema.const;
    checks.push((v, p) => (v === c ? undefined : `${fieldName(p)} must be ${show(c)}, got ${show(v)}`));
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum as unknown[];
    checks.push((v, p) => (values.includes(v) ? undefined : `${fieldName(p)} must be one of ${values.map(show).join(", ")}, got ${show(v)}`));
  }
  if (Array.isArray(schema.anyOf)) {
    const branches = (schema.anyOf as Record<string, unknown>[]).map((s, i) => ({ schema: s, check: buildChecker(s, `${where}.anyOf[${i}]`) }));
    const allConst = branches.every((b) => "const" in b.schema);
    checks.push((v, p) => {
      const errors: string[] = [];
      for (const b of branches) {
        const e = b.check(v, p);
        if (e === undefined) return undefined;
        errors.push(e);
      }
      if (allConst) return `${fieldName(p)} must be one of ${branches.map((b) => show(b.schema.const)).join(", ")}, got ${show(v)}`;
      // The branch whose type fits gives the most precise message.
      const fitting = branches.findIndex((b) => typeof b.schema.type === "string" && hasType(v, b.schema.type as string));
      if (fitting >= 0) return errors[fitting];
      const kinds = [...new Set(branches.map((b) => (typeof b.schema.type === "string" ? article(b.schema.type as string) : "a matching value")))];
      return `${fieldName(p)} must be ${kinds.join(" or ")}, got ${typeName(v)}`;
    });
  }
  if (typeof schema.minimum === "number") {
    const min = schema.minimum;
    checks.push((v, p) => (typeof v !== "number" || v >= min ? undefined : `${fieldName(p)} must be >= ${min}, got ${v}`));
  }
  if (typeof schema.maximum === "number") {
    const max = schema.maximum;
    checks.push((v, p) => (typeof v !== "number" || v <= max ? undefined : `${fieldName(p)} must be <= ${max}, got ${v}`));
  }
  if (typeof schema.minLength === "number") {
    const min = schema.minLength;
    checks.push((v, p) => (typeof v !== "string" || v.length >= min ? undefined : `${fieldName(p)} must have at least ${min} characters`));
  }
  if (typeof schema.maxLength === "number") {
    const max = schema.maxLength;
    checks.push((v, p) => (typeof v !== "string" || v.length <= max ? undefined : `${fieldName(p)} must have at most ${max} characters`));
  }
  if (schema.properties || schema.required || schema.additionalProperties !== undefined) {
    const props = Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>).map(
      ([name, s]) => [name, buildChecker(s, `${where}.${name}`)] as const,
    );
    const known = new Set(props.map(([n]) => n));
    const required = (schema.required ?? []) as string[];
    const additional = schema.additionalProperties;
    const extraCheck = additional && typeof additional === "object" ? buildChecker(additional as Record<string, unknown>, `${where}.additionalProperties`) : undefined;
    checks.push((v, p) => {
      if (!hasType(v, "object")) return undefined; // the type keyword reports it
      const obj = v as Record<string, unknown>;
      for (const name of required) {
        if (obj[name] === undefined) return `missing required field "${join(p, name)}"`;
      }
      for (const [name, check] of props) {
        if (obj[name] === undefined) continue;
        const e = check(obj[name], join(p, name));
        if (e) return e;
      }
      if (additional === false || extraCheck) {
        for (const name of Object.keys(obj)) {
          if (known.has(name)) continue;
          if (additional === false) return `unknown field "${join(p, name)}"`;
          const e = extraCheck!(obj[name], join(p, name));
          if (e) return e;
        }
      }
      return undefined;
    });
  }
  if (schema.items && typeof schema.items === "object") {
    const item = buildChecker(schema.items as Record<string, unknown>, `${where}.items`);
    checks.push((v, p) => {
      if (!Array.isArray(v)) return undefined;
      for (let i = 0; i < v.length; i++) {
        const e = item(v[i], `${p}[${i}]`);
        if (e) return e;
      }
      return undefined;
    });
  }
  if (checks.length === 1) return checks[0]!;
  return (v, p) => {
    for (const c of checks) {
      const e = c(v, p);
      if (e) return e;
    }
    return undefined;
  };
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function article(type: string): string {
  if (type === "null" || type === "undefined") return type;
  if (type === "array" || type === "object" || type === "integer") return `an ${type}`;
  return `a ${type}`;
}

const checkers = new Map<string, Check>();
function checkerFor(type: RpcCommandType | "extension_ui_response"): Check {
  let c = checkers.get(type);
  if (!c) {
    const schema = type === "extension_ui_response" ? ExtensionUiResponse : COMMANDS[type];
    c = buildChecker(schema as unknown as Record<string, unknown>, type);
    checkers.set(type, c);
  }
  return c;
}

export type ValidationResult =
  | { ok: true; kind: "command"; command: RpcCommand }
  | { ok: true; kind: "ui_response"; response: RpcExtensionUiResponse }
  | { ok: false; id?: string | number; command: string; error: string };

export function isCommandType(type: string): type is RpcCommandType {
  return Object.prototype.hasOwnProperty.call(COMMANDS, type);
}

/**
 * Checks one parsed input line. On failure the result carries what the error response echoes:
 * the id (when it is a string or number) and the command type (or "unknown").
 */
export function validateInput(value: unknown): ValidationResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, command: "unknown", error: `a command must be a JSON object with a "type" field, got ${typeName(value)}` };
  }
  const obj = value as Record<string, unknown>;
  const id = typeof obj.id === "string" || typeof obj.id === "number" ? obj.id : undefined;
  const type = obj.type;
  if (typeof type !== "string") {
    return {
      ok: false,
      id,
      command: "unknown",
      error: type === undefined ? `missing required field "type" (the command name)` : `field "type" must be a string, got ${typeName(type)}`,
    };
  }
  if (type !== "extension_ui_response" && !isCommandType(type)) {
    return { ok: false, id, command: type, error: `unknown command type ${show(type)} (see \`pi rpc-schema\` for the commands)` };
  }
  const error = checkerFor(type)(value, "");
  if (error) return { ok: false, id, command: type, error: `${type}: ${error}` };
  if (type === "extension_ui_response") return { ok: true, kind: "ui_response", response: value as RpcExtensionUiResponse };
  return { ok: true, kind: "command", command: value as RpcCommand };
}
