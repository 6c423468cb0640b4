/**
 * Mermaid diagrams and LaTeX math in chat markdown.
 *
 * Mermaid: a closed ```mermaid fence is drawn as a Unicode box diagram by lovely-mermaid (the
 * library pi 1.6 uses; no dependencies; ~230 ms to load on a busy machine, so it loads on the
 * first mermaid block and the chat redraws when it is there). Until then, when the diagram is
 * wider than the chat, when the library reports it cannot draw it, or with the setting
 * markdown.mermaid "off", the block stays a code block labelled `mermaid`.
 *
 * LaTeX: $$…$$ and \[…\] blocks are shown as Unicode text by pi-tui's renderLatex (fractions and
 * limits stacked); what it does not support is shown as its source.
 */
import type { Theme } from "./theme.js";
import { piTuiModule } from "./component-host.js";

interface MermaidArt {
  plain: string[];
  width: number;
  warnings: string[];
}
interface Mermaid {
  render(src: string): MermaidArt | undefined;
  toAnsi(art: MermaidArt, theme?: Record<string, string>): string[];
}

let mermaid: Mermaid | undefined;
let loading: Promise<void> | undefined;
let failed = false;
let generation = 0;
const listeners = new Set<() => void>();

/** Bumped when a library arrives: cached markdown lines drawn without it are stale. */
export function diagramsGeneration(): number {
  return generation;
}

/** Be told when a diagram library finished loading (the chat redraws). */
export function onDiagramsReady(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

function loadMermaid(): void {
  if (loading || failed) return;
  loading = import("lovely-mermaid")
    .then((m) => {
      mermaid = m as unknown as Mermaid;
      generation++;
      for (const cb of listeners) cb();
    })
    .catch(() => {
      failed = true;
    });
}

/** Start loading the Mermaid renderer now (tests, or a caller that knows one is coming). */
export function preloadMermaid(): Promise<void> {
  loadMermaid();
  return loading ?? Promise.resolve();
}

/** The diagram's lines for `width` columns, or undefined to show the source as a code block. */
export function mermaidLines(src: string, width: number, theme: Theme): string[] | undefined {
  if (!mermaid) {
    loadMermaid();
    return undefined;
  }
  let art: MermaidArt | undefined;
  try {
    art = mermaid.render(src);
  } catch {
    return undefined;
  }
  if (!art || art.width > width || art.warnings.length) return undefined;
  const sgr = (token: string) => theme.getFgAnsi(token).slice(2, -1);
  try {
    return mermaid.toAnsi(art, { border: sgr("borderMuted"), text: sgr("text"), edge: sgr("accent"), edgeLabel: sgr("text"), title: `1;${sgr("accent")}` });
  } catch {
    return art.plain;
  }
}

/** LaTeX math as Unicode lines (pi-tui's renderLatex), or undefined when it cannot be rendered. */
export function latexLines(src: string): string[] | undefined {
  const render = (piTuiModule() as { renderLatex?: (s: string, o?: { display?: boolean }) => string | undefined } | undefined)?.renderLatex;
  if (!render) return undefined;
  try {
    const out = render(src.trim(), { display: true });
    return out === undefined ? undefined : out.split("\n");
  } catch {
    return undefined;
  }
}
