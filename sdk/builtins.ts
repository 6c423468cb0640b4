/**
 * The built-in plugins `pi` is made of. A custom CLI may take this list, drop or add plugins.
 */
import { markVerifiedManifests, type PluginManifest } from "../core/kernel/plugin.js";
import providers from "../plugins/providers/index.js";
import faux from "../plugins/faux/index.js";
import tools from "../plugins/tools/index.js";
import printMode from "../modes/print/index.js";
import interactiveMode from "../modes/tui/index.js";
import rpcMode from "../modes/rpc/index.js";
import acpMode from "../modes/acp/index.js";
import resources from "../plugins/resources/index.js";
import packages from "../plugins/packages/index.js";
import mcp from "../plugins/mcp/index.js";
import trust from "../plugins/trust/index.js";
import permissionGate from "../plugins/permission-gate/index.js";
import ccHooks from "../plugins/cc-hooks/index.js";
import extensions from "../plugins/extensions/index.js";
import scaffolds from "../plugins/scaffolds/index.js";
import compaction from "../plugins/compaction/index.js";
import exportHtml from "../plugins/export-html/index.js";
import sandbox from "../plugins/sandbox/index.js";
import auth from "../plugins/auth/index.js";
import retry from "../plugins/retry/index.js";
import network from "../plugins/network/index.js";
import llama from "../plugins/llama/index.js";
import checkpoints from "../plugins/checkpoints/index.js";

export function builtinPlugins(): PluginManifest[] {
  const all = [providers, faux, tools, printMode, interactiveMode, rpcMode, acpMode, resources, packages, mcp, trust, permissionGate, ccHooks, extensions, scaffolds, compaction, exportHtml, sandbox, auth, retry, network, llama, checkpoints];
  markVerifiedManifests(all); // their versions are checked by tests/builtin-manifests.test.ts
  return all;
}
