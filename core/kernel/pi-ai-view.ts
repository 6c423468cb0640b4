/**
 * What a pi 1.6 extension gets when it imports `@earendil-works/pi-ai` (the loader aliases the
 * name here; nothing else imports this file, so it loads only when an extension does): the real
 * pi-ai 1.6 through its `compat` entry (model catalog `getModel`/`getModels`, api-dispatching
 * `stream`/`complete`, …) plus TypeBox's `Type`, which 1.6 extensions still import from pi-ai,
 * and a `StringEnum` built with that same TypeBox. The TypeBox is the one extensions get for
 * `typebox`, so schemas built with either import mix freely.
 */
import { Type, type TUnsafe } from "typebox";

export * from "@earendil-works/pi-ai/compat";
export type { Static, TSchema } from "typebox";
export { Type };

/** A `{ type: "string", enum: [...] }` schema (providers that reject anyOf/const accept it), typed for `Static`. */
export function StringEnum<T extends readonly string[]>(values: T, options?: { description?: string; default?: T[number] }): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(options ?? {}) });
}
