/**
 * One loaded extension as the host keeps it: its name and origin, the PluginApi scope its
 * registrations are attributed to (and undone through), and what else /reload has to undo.
 */
import type { PluginApi } from "../../core/kernel/index.js";
import type { ExtensionOrigin } from "./discovery.js";
import type { ExtensionContext } from "./types.js";

export interface LoadedExtension {
  /** Attribution: the module path, or `<inline:n>`. */
  readonly name: string;
  readonly path: string;
  readonly origin: ExtensionOrigin;
  readonly scope: PluginApi;
  /** Flags this extension registered, with their defaults. */
  readonly flags: Map<string, unknown>;
  /** Undo functions beyond the scope's own (bus subscriptions, OAuth providers). */
  readonly disposers: Array<() => void>;
  /** Providers this extension registered → undo. */
  readonly providers: Map<string, () => void>;
  stale: boolean;
  ctx?: ExtensionContext;
}
