/**
 * pi 1.6's SDK runtime exports: resource loading, packages, the model runtime, the CLI
 * parser and the extension runner, each over this project's own machinery (see the files).
 */
export { DefaultResourceLoader, type DefaultResourceLoaderOptions, type ResourceLoader, type ResourceDiagnostic, type ResourceExtensionPaths } from "./resource-loader.js";
export { DefaultPackageManager, type DefaultPackageManagerOptions, type ResolvedPaths, type ResolvedResource, type PathMetadata, type ProgressEvent, type MissingSourceAction } from "./package-manager.js";
export {
  ModelRuntime,
  CredentialSynchronizationError,
  resolveCliModel,
  resolveModelScopeWithDiagnostics,
  type CreateModelRuntimeOptions,
  type CredentialSynchronizationOperation,
  type ModelRuntimeAuthOverrides,
  type ResolveCliModelResult,
  type ResolveModelScopeResult,
  type ModelScopeDiagnostic,
} from "./model-runtime.js";
export { parseArgs, type Args } from "./cli-args.js";
export {
  ExtensionRunner,
  createExtensionRuntime,
  discoverAndLoadExtensions,
  wrapRegisteredTool,
  wrapRegisteredTools,
  type Extension as LoadedExtensionRecord,
  type ExtensionRuntime,
  type LoadExtensionsResult,
  type RegisteredTool,
  type ExtensionContextActions,
} from "./extension-runtime.js";
