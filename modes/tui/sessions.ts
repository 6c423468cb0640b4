/**
 * The session picker (/resume, `pi -r`): this folder's sessions or all of them (Tab), forks under
 * the session they came from, newest first, or (Ctrl+S) newest first or ranked by the search
 * (session-search.ts). pi 1.6's keys: Ctrl+S the order, Ctrl+N only
 * named sessions, Ctrl+P the file's path shown, Ctrl+R rename, Ctrl+D (or Ctrl+Backspace with an
 * empty search) delete after Enter confirms — to the trash when a `trash` command exists.
 */
import { SessionManager, listSessionsInDir, type SessionInfo } from "../../core/stores/index.js";
import type { SessionsHost } from "./host.js";
import { SelectLayer, type SelectItem } from "./layers.js";
import { SESSION_SORTS, deleteSessionFile, drawSessionRow, hasSessionName, listSessions, nextSessionSort, type SessionSort } from "./session-search.js";
import type { Painter } from "./tree-model.js";

/** The picker's rows as items: each drawn by the row formatter the SessionSelectorComponent uses. */
export function sessionItems(rows: ReadonlyArray<{ session: SessionInfo; prefix: string }>, opts: { all: boolean; current?: string; showPath?: boolean; deleting?: string; theme: Painter }): SelectItem<string>[] {
  return rows.map(({ session: s, prefix }) => ({
    label: s.name ?? s.firstMessage,
    value: s.path,
    searchText: `${s.name ?? ""}\n${s.firstMessage}\n${s.allMessagesText}\n${s.cwd}`,
    draw: (width, selected) => drawSessionRow(s, { prefix, width, selected, current: s.path === opts.current, deleting: s.path === opts.deleting, showCwd: opts.all, showPath: opts.showPath }, opts.theme),
  }));
}

export async function pickSession(app: SessionsHost): Promise<string | undefined> {
  const sm = app.runtime.sessionManager;
  const dir: string | undefined = sm?.getSessionDir?.();
  let all = false;
  let namedOnly = false;
  let showPath = false;
  let sort: SessionSort = "threaded";
  /** The session waiting for Enter to be deleted. */
  let deleting: string | undefined;
  let list: SessionInfo[] = [];
  const current = app.session.sessionFile as string | undefined;
  const load = async (everything: boolean): Promise<SessionInfo[]> => {
    if (everything) return SessionManager.listAll();
    return dir ? listSessionsInDir(dir) : SessionManager.list(app.kernel.cwd);
  };
  const kb = app.keys;
  const hint = `↑↓ move · Enter open · Tab this folder / all · ${kb.hint("app.session.toggleSort")} sort · ${kb.hint("app.session.toggleNamedFilter")} named · ${kb.hint("app.session.togglePath")} path · ${kb.hint("app.session.rename")} rename · ${kb.hint("app.session.delete")} delete · Esc cancel`;
  const title = () => `Resume a session (${all ? "all folders" : "this folder"}${namedOnly ? ", named only" : ""}) Sort: ${SESSION_SORTS.find((x) => x.sort === sort)!.label}`;
  let layerRef: SelectLayer<string> | undefined;
  /** The picker's rows for a search, as items. */
  const rows = (query: string) => {
    const listed = listSessions(list, { query, sort, namedOnly });
    return sessionItems(listed, { all, current, showPath, deleting, theme: app.theme });
  };
  const show = (note?: string) => {
    const layer = layerRef;
    if (!layer) return;
    const count = namedOnly ? list.filter(hasSessionName).length : list.length;
    layer.setItems(rows(""));
    layer.title = `${title()} — ${note ?? `${count} session${count === 1 ? "" : "s"}`}`;
    app.requestRender();
  };
  const refresh = async (note?: string) => {
    const layer = layerRef;
    if (!layer) return;
    layer.title = `${title()} — loading…`;
    app.requestRender();
    try {
      list = await load(all);
      show(note);
    } catch (e) {
      layer.title = `${title()} — ${(e as Error).message}`;
    }
    app.requestRender();
  };
  return app.dialog<string | undefined>((finish) => {
    const layer = new SelectLayer<string>({
      title: title(),
      items: [],
      search: true,
      maxVisible: 12,
      onDone: finish,
      // A search gives a flat list: matches in the order the sort gives them.
      filter: (_items, query) => rows(query),
      wrapHint: true,
      hint,
      onKey: (k, item) => {
        if (deleting !== undefined) {
          // Only Enter (delete) and Esc (keep) answer "Delete session?".
          const path = deleting;
          if (kb.matches(k, "tui.select.confirm") || kb.matches(k, "tui.select.cancel") || k.id === "escape") {
            deleting = undefined;
            layer.hint = hint;
            if (kb.matches(k, "tui.select.confirm")) {
              void deleteSessionFile(path).then(
                (how) => refresh(how === "trash" ? "session moved to the trash" : "session deleted"),
                (e: Error) => show(`could not delete it: ${e.message}`),
              );
            } else show();
          }
          return true;
        }
        if (k.id === "tab") {
          all = !all;
          void refresh();
          return true;
        }
        if (kb.matches(k, "app.session.toggleSort")) {
          sort = nextSessionSort(sort);
          show();
          return true;
        }
        if (kb.matches(k, "app.session.toggleNamedFilter")) {
          namedOnly = !namedOnly;
          show();
          return true;
        }
        if (kb.matches(k, "app.session.togglePath")) {
          showPath = !showPath;
          show();
          return true;
        }
        const noninvasive = kb.matches(k, "app.session.deleteNoninvasive");
        if (kb.matches(k, "app.session.delete") || (noninvasive && !layer.query)) {
          if (!item) return true;
          if (item.value === current) {
            show("the current session cannot be deleted");
            return true;
          }
          deleting = item.value;
          layer.setItems(rows(""));
          layer.hint = "Delete session? Enter delete · Esc keep";
          app.requestRender();
          return true;
        }
        if (noninvasive) return false; // with a search typed it edits the search
        if (kb.matches(k, "app.session.rename")) {
          if (!item) return true;
          const path = item.value;
          const had = list.find((s) => s.path === path)?.name ?? "";
          void (async () => {
            const name = (await app.input("Session name", { prefill: had, placeholder: "a name for the session" }))?.trim();
            if (!name) return;
            try {
              if (path === current && typeof app.session.setSessionName === "function") app.session.setSessionName(name);
              else SessionManager.open(path).appendSessionInfo(name);
              await refresh("renamed");
            } catch (e) {
              show(`could not rename it: ${(e as Error).message}`);
            }
          })();
          return true;
        }
        return false;
      },
    });
    layerRef = layer;
    void refresh();
    return layer;
  }, undefined);
}
