// A view whose module loads the first time it is shown (Monitor, Rules, Memory,
// Agents, Settings): the page starts without them, so its first state comes
// sooner. Its section is in index.html all along; the module fills it.

export class LazyView {
  /** `load`: resolves to the view, e.g. () => import("./rules.js").then((m) => new m.RulesView()). */
  constructor(load) {
    this.load = load;
    this.view = null;
    this.loading = null;
    this.wanted = false;
  }

  /** The view, its module loaded if it was not. */
  get() {
    if (!this.loading) {
      this.loading = this.load().then(
        (view) => (this.view = view),
        (error) => {
          this.loading = null; // the next show tries again (the server may be back)
          throw error;
        },
      );
    }
    return this.loading;
  }

  show() {
    this.wanted = true;
    this.get().then(
      (view) => {
        if (this.wanted) view.show();
      },
      (error) => console.error("Sparrow: a view could not load", error),
    );
  }

  hide() {
    this.wanted = false;
    this.view?.hide?.();
  }

  /** Tell a loaded view to `method`; one never shown has nothing to bring up to date. */
  ifLoaded(method, ...args) {
    this.view?.[method]?.(...args);
  }
}
