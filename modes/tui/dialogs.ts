/**
 * The dialog host: the stack of layers (selectors, confirmations, inputs, extension
 * components) drawn in the bottom panel or as an overlay. The top layer has the keyboard; a
 * dialog resolves once — answered, timed out, aborted, or with its default when the app quits.
 */
import { dialogDeadline, type UiDialogOptions } from "../../core/kernel/index.js";
import type { AppView } from "./app-view.js";
import { ConfirmLayer, InputLayer, SelectLayer, type Layer, type SelectItem } from "./layers.js";

export class DialogHost {
  readonly layers: Layer[] = [];
  /** Cancel functions of the dialogs still open (each answers its default). */
  readonly open = new Set<() => void>();
  private countdownTimer: NodeJS.Timeout | undefined;

  constructor(private readonly app: AppView) {}

  get top(): Layer | undefined {
    return this.layers[this.layers.length - 1];
  }

  /** Close everything (teardown). */
  dispose(): void {
    this.cancelDialogs();
    if (this.countdownTimer) clearInterval(this.countdownTimer);
    this.countdownTimer = undefined;
    for (const l of this.layers.splice(0)) l.dispose?.();
  }

  pushLayer(l: Layer): void {
    this.layers.push(l);
    this.app.programStatus.setBlocked((l as { title?: string }).title ?? "Waiting for input", true);
    this.app.completion = undefined;
    this.syncCountdown();
    this.app.requestRender();
  }

  popLayer(l: Layer): void {
    const i = this.layers.indexOf(l);
    if (i !== -1) {
      this.layers.splice(i, 1);
      this.app.programStatus.setBlocked(undefined, false);
    }
    l.dispose?.();
    this.syncCountdown();
    this.app.requestRender();
  }

  syncCountdown(): void {
    const want = this.layers.some((l) => l.deadline !== undefined);
    if (want && !this.countdownTimer && !this.app.destroyed) {
      this.countdownTimer = setInterval(() => this.app.requestRender(), 250);
      this.countdownTimer.unref?.();
    } else if (!want && this.countdownTimer) {
      clearInterval(this.countdownTimer);
      this.countdownTimer = undefined;
    }
  }

  /** Answer every open dialog with its default (quitting). */
  cancelDialogs(): void {
    for (const cancel of [...this.open]) cancel();
  }

  /** Show a dialog layer until it answers, the timeout runs out or the signal aborts. */
  dialog<T>(make: (finish: (v: T) => void, deadline: number | undefined) => Layer, fallback: T, opts?: UiDialogOptions): Promise<T> {
    if (this.app.destroyed || this.app.quitting) return Promise.resolve(fallback);
    return new Promise<T>((resolve) => {
      let done = false;
      const dl = dialogDeadline(opts, fallback);
      const deadline = opts?.timeout !== undefined && opts.timeout >= 0 ? Date.now() + opts.timeout : undefined;
      let layer: Layer | undefined;
      const cancel = () => finish(fallback);
      const finish = (v: T) => {
        if (done) return;
        done = true;
        this.open.delete(cancel);
        dl.cancel();
        if (layer) this.popLayer(layer);
        resolve(v);
      };
      this.open.add(cancel);
      layer = make(finish, deadline);
      void dl.promise.then((v) => finish(v));
      if (!done) this.pushLayer(layer);
    });
  }

  select<T>(title: string, items: SelectItem<T>[], extra: Partial<ConstructorParameters<typeof SelectLayer<T>>[0]> = {}, opts?: UiDialogOptions): Promise<T | undefined> {
    return this.dialog<T | undefined>(
      (finish, deadline) => new SelectLayer<T>({ title, items, onDone: finish, deadline, deadlineLabel: "closes", ...extra }),
      undefined,
      opts,
    );
  }

  confirm(title: string, message: string, opts?: UiDialogOptions): Promise<boolean> {
    return this.dialog<boolean>((finish, deadline) => new ConfirmLayer(title, message, finish, deadline), false, opts);
  }

  input(title: string, o: { placeholder?: string; prefill?: string; multiline?: boolean; message?: string } = {}, opts?: UiDialogOptions): Promise<string | undefined> {
    return this.dialog<string | undefined>((finish, deadline) => new InputLayer(title, finish, this.app.keys, { ...o, deadline }), undefined, opts);
  }
}
