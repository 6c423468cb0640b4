/**
 * The models.json schema as a TypeBox definition: the source of the published
 * schemas/models.schema.json (scripts/gen-schemas.mjs; tests/schemas.test.ts checks the file
 * equals what this generates). Its static type is checked against the interfaces the registry
 * reads (ModelsJsonProvider, ModelOverride, ModelDefinition) at compile time below.
 */
import { Type, type Static, type TSchema } from "typebox";
import type { ModelDefinition } from "../../kernel/kernel.js";
import { THINKING_LEVELS, type ThinkingLevel } from "../../kernel/types.js";
import type { ModelOverride, ModelsJsonProvider } from "./model-registry.js";

const opt = <T extends TSchema>(t: T) => Type.Optional(t);
const VALUE = "A literal, the name of an environment variable (its value when set), or !command (its output).";

const Input = Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]), { description: "What the model takes." });
const Cost = Type.Object(
  {
    input: Type.Number({ minimum: 0, description: "$ per million input tokens." }),
    output: Type.Number({ minimum: 0, description: "$ per million output tokens." }),
    cacheRead: Type.Number({ minimum: 0 }),
    cacheWrite: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: true },
);
const Headers = Type.Record(Type.String(), Type.String({ description: VALUE }), { description: "Extra request headers." });
const Compat = Type.Record(Type.String(), Type.Unknown(), { description: "pi-ai compatibility switches of an OpenAI-compatible endpoint (supportsDeveloperRole, maxTokensField, …)." });
const LevelValue = Type.Union([Type.String(), Type.Null()]);
const ThinkingLevelMap = Type.Object(
  Object.fromEntries(THINKING_LEVELS.map((level) => [level, opt(LevelValue)])) as Record<ThinkingLevel, ReturnType<typeof opt<typeof LevelValue>>>,
  {
    additionalProperties: false,
    description: "Thinking level → the provider's value; null means the model does not take that level. xhigh and max are offered only where mapped to a value.",
  },
);

const modelFields = {
  name: opt(Type.String({ minLength: 1, description: "Display name." })),
  api: opt(Type.String({ description: "Wire API, when it differs from the provider's." })),
  baseUrl: opt(Type.String({ description: "Base URL, when it differs from the provider's." })),
  reasoning: opt(Type.Boolean({ description: "Whether the model thinks (takes thinking levels)." })),
  thinkingLevelMap: opt(ThinkingLevelMap),
  input: opt(Input),
  contextWindow: opt(Type.Integer({ minimum: 1 })),
  maxTokens: opt(Type.Integer({ minimum: 1 })),
  cost: opt(Cost),
  headers: opt(Headers),
  compat: opt(Compat),
};

const Model = Type.Object({ id: Type.String({ minLength: 1, description: "The model id sent to the API." }), ...modelFields }, { additionalProperties: true });
const Override = Type.Object(
  { ...modelFields, cost: opt(Type.Partial(Cost)) },
  { additionalProperties: true, description: "Changes to a built-in model of this provider." },
);

const Provider = Type.Object(
  {
    name: opt(Type.String({ minLength: 1, description: "Display name." })),
    baseUrl: opt(Type.String({ minLength: 1, description: "API base URL (also used for the provider's built-in models)." })),
    api: opt(Type.String({ description: "Wire API: openai-completions, openai-responses, anthropic-messages, google-generative-ai, …" })),
    apiKey: opt(Type.String({ minLength: 1, description: VALUE })),
    headers: opt(Headers),
    authHeader: opt(Type.Boolean({ description: "Send the key as Authorization: Bearer." })),
    compat: opt(Compat),
    models: opt(Type.Array(Model, { description: "Models of a custom provider." })),
    modelOverrides: opt(Type.Record(Type.String(), Override, { description: "Changes to built-in models, by id." })),
  },
  { additionalProperties: true },
);

export const ModelsSchema = Type.Object(
  {
    $schema: opt(Type.String({ description: "The URL or path of this schema (for editors)." })),
    providers: Type.Record(Type.String(), Provider, { description: "Providers by name: new ones, or changes to built-in ones." }),
  },
  {
    title: "pi-kernel models.json",
    description: "Custom providers and models, and changes to built-in ones (<agentDir>/models.json). // comments are allowed in the file.",
    additionalProperties: true,
  },
);

export type ModelsFile = Static<typeof ModelsSchema>;

// Compile-time checks: what the registry reads is what the schema describes.
type Provider16 = ModelsFile["providers"][string];
type Missing<T, S> = Exclude<keyof T, keyof S>;
export const MODELS_SCHEMA_COVERS_REGISTRY: [Missing<ModelsJsonProvider, Provider16> | Missing<ModelDefinition, Static<typeof Model>> | Missing<ModelOverride, Static<typeof Override>>] extends [never]
  ? true
  : never = true;
