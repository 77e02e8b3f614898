// The dashboard's only script: live refresh of the menu, and a question before a removal.
// Everything it inserts is HTML the server rendered and escaped; it never builds markup itself.
"use strict";

function refresh(target) {
  fetch(target.dataset.refresh, { credentials: "same-origin" })
    .then((answer) => answer.ok ? answer.text() : Promise.reject(answer.status))
    .then((html) => {
      const focused = document.activeElement && document.activeElement.closest("[data-server]");
      const keep = focused ? focused.dataset.server : null;
      target.innerHTML = html;
      document.body.dataset.version = String(Number(document.body.dataset.version || 0) + 1);
      if (keep) {
        const again = target.querySelector(`[data-server="${CSS.escape(keep)}"] button`);
        if (again) { again.focus(); }
      }
    })
    .catch(() => {});
}

// Changes reach the page on its one stream (questions.js opens it): refresh what follows them.
function listen() {
  document.addEventListener("hermes:event", (event) => {
    if (event.detail.type !== "changed") { return; }
    document.querySelectorAll("[data-refresh]").forEach(refresh);
    document.body.dataset.seen = String(event.detail.version);
  });
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// A tool run's page while it runs: ask for its state until it has ended, then show the result.
function followRun() {
  const running = document.querySelector("[data-reload-when-done]");
  if (!running) { return; }
  fetch(running.dataset.reloadWhenDone, { credentials: "same-origin" })
    .then((answer) => answer.ok ? answer.json() : Promise.reject(answer.status))
    .then((state) => { if (state.done) { window.location.reload(); } else { followRun(); } })
    .catch((status) => {
      if (status === 404) { running.textContent = "This run is gone (the dashboard keeps the last 32)."; return; }
      setTimeout(followRun, 2000);
    });
}

document.addEventListener("DOMContentLoaded", listen);
document.addEventListener("DOMContentLoaded", followRun);
