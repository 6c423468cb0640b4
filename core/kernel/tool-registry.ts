/**
 * The tool registry: named tools plus tool middleware.
 *
 * A wrapper decorates one tool (built-in, MCP, another extension's): it receives the tool as
 * it stands (already wrapped by earlier wrappers) and returns the tool to use instead. Wrappers
 * apply in registration order, so the first one registered is the innermost; the order is
 * deterministic and visible through `describe()`.
 */
import { Registry, type RegisterOptions } from "./registry.js";
import type { Diagnostic, ToolDefinition } from "./types.js";

export type ToolWrapper = (tool: ToolDefinition) => ToolDefinition;

interface WrapperEntry {
  source: string;
  wrapper: ToolWrapper;
}

export interface ToolDescription {
  name: string;
  source: string;
  wrappedBy: string[];
  description: string;
}

export class ToolRegistry {
  private readonly registry: Registry<ToolDefinition>;
  private readonly wrappers = new Map<string, WrapperEntry[]>();
  private readonly resolved = new Map<string, ToolDefinition>();

  constructor(private readonly report: (d: Diagnostic) => void) {
    this.registry = new Registry<ToolDefinition>("tool", report);
    this.registry.onChange(() => this.resolved.clear());
  }

  register(tool: ToolDefinition, source: string, opts?: RegisterOptions): (() => void) | undefined {
    if (!tool || typeof tool.name !== "string" || !tool.name || typeof tool.execute !== "function") {
      this.report({ level: "error", source, message: `tool from ${source} is malformed: it needs a name and an execute() function` });
      return undefined;
    }
    return this.registry.register(tool.name, tool, source, opts);
  }

  /** Decorate the tool `name` (which may be registered later). Returns a remover. */
  wrap(name: string, wrapper: ToolWrapper, source: string): () => void {
    const list = this.wrappers.get(name) ?? [];
    const entry = { source, wrapper };
    list.push(entry);
    this.wrappers.set(name, list);
    this.resolved.delete(name);
    return () => {
      const l = this.wrappers.get(name);
      if (!l) return;
      const i = l.indexOf(entry);
      if (i >= 0) l.splice(i, 1);
      this.resolved.delete(name);
    };
  }

  /** The tool with its wrappers applied. */
  get(name: string): ToolDefinition | undefined {
    const cached = this.resolved.get(name);
    if (cached) return cached;
    let tool = this.registry.get(name);
    if (!tool) return undefined;
    for (const w of this.wrappers.get(name) ?? []) {
      try {
        const next = w.wrapper(tool);
        if (next && typeof next.execute === "function") tool = { ...next, name };
        else this.report({ level: "error", source: w.source, message: `wrapper of tool "${name}" did not return a tool; ignored` });
      } catch (error) {
        this.report({ level: "error", source: w.source, message: `wrapper of tool "${name}" threw; ignored`, error });
      }
    }
    this.resolved.set(name, tool);
    return tool;
  }

  /** The tool as registered, without wrappers. */
  getRaw(name: string): ToolDefinition | undefined {
    return this.registry.get(name);
  }

  has(name: string): boolean {
    return this.registry.has(name);
  }

  names(): string[] {
    return this.registry.names();
  }

  all(): ToolDefinition[] {
    return this.names().map((n) => this.get(n)!).filter(Boolean);
  }

  describe(): ToolDescription[] {
    return this.registry.list().map((e) => ({
      name: e.name,
      source: e.source,
      wrappedBy: (this.wrappers.get(e.name) ?? []).map((w) => w.source),
      description: e.value.description,
    }));
  }

  removeSource(source: string): void {
    this.registry.removeSource(source);
    for (const [name, list] of this.wrappers) {
      const kept = list.filter((w) => w.source !== source);
      if (kept.length !== list.length) {
        this.wrappers.set(name, kept);
        this.resolved.delete(name);
      }
    }
  }

  onChange(fn: () => void): () => void {
    return this.registry.onChange(fn);
  }
}
