/**
 * The modules of pi-ai that the fast and direct paths use (pi-ai-parts.ts), gathered in one
 * module so that the bundle makes one chunk of them: the first request resolves, reads and
 * compiles one file instead of ten. Loaded on first use only.
 */
export * as transformMessages from "@earendil-works/pi-ai/api/transform-messages";
export * as sanitizeUnicode from "@earendil-works/pi-ai/utils/sanitize-unicode";
export * as identity from "@earendil-works/pi-ai/utils/identity";
export * as transcript from "@earendil-works/pi-ai/utils/transcript";
export * as text from "@earendil-works/pi-ai/utils/text";
export * as estimate from "@earendil-works/pi-ai/utils/estimate";
export * as hash from "@earendil-works/pi-ai/utils/hash";
export * as jsonParse from "@earendil-works/pi-ai/utils/json-parse";
export * as openrouterCost from "@earendil-works/pi-ai/utils/openrouter-cost";
export * as errorBody from "@earendil-works/pi-ai/utils/error-body";
