// awf ui: live updates and filters. A page whose <main> says data-live="true" listens to the server's
// events (server-sent events) and, on each change, fetches its own URL's main element again
// and swaps it in; it stops once the page says it is no longer live (the run ended), and
// while the page is out of view.
"use strict";
(function () {
  // A page out of view lets go of its stream: a browser opens at most six connections to a
  // server over HTTP/1.1, and every live page would hold one, so that a seventh tab would never
  // load. Back in view, the page catches up and follows again. body's data-following says
  // whether it follows now.
  let source = null;
  function live() {
    const main = document.getElementById("main");
    return main && main.dataset.live === "true" && main.dataset.events ? main : null;
  }
  function follow() {
    const main = live();
    if (!main || document.visibilityState === "hidden") {
      if (source) { source.close(); source = null; }
      document.body.dataset.following = "false";
      return;
    }
    if (source) return;
    source = new EventSource(main.dataset.events);
    source.addEventListener("change", refresh);
    document.body.dataset.following = "true";
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState !== "hidden" && !source && live()) {
      refresh(); // it follows again once caught up
      return;
    }
    follow();
  });
  let busy = false, again = false;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const url = new URL(location.href);
      url.searchParams.set("fragment", "1");
      const resp = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (resp.ok) {
        const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
        const next = doc.getElementById("main");
        const main = document.getElementById("main");
        if (next && main) {
          keepOpen(main, next);
          main.replaceWith(document.adoptNode(next));
          document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
        }
      }
    } finally {
      busy = false;
      follow();
      if (again) { again = false; refresh(); }
    }
  }
  // keepOpen carries which <details> the reader opened or closed over to the new content.
  function keepOpen(old, next) {
    old.querySelectorAll("section.step[data-step]").forEach(function (sec) {
      const d = sec.querySelector(":scope > details.output");
      const twin = next.querySelector('section.step[data-step="' + CSS.escape(sec.dataset.step) + '"] > details.output');
      if (d && twin) twin.open = d.open;
    });
  }
  // Filters apply as soon as a choice changes (the Filter button does it without JavaScript).
  document.addEventListener("change", function (ev) {
    const form = ev.target.closest && ev.target.closest("form.filters");
    if (form && ev.target.tagName === "SELECT") form.requestSubmit();
  });
  document.addEventListener("DOMContentLoaded", follow);
})();
