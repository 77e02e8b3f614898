// The page's one event stream (a browser allows only a handful of connections to a host, so each
// page keeps one), handed to the page's other scripts as `hermes:event` DOM events; and the
// questions from the agent and the servers, on every page: approve a tool (once, always, deny),
// let a server use the model, fill in a server's form, open a page it names. A tool run from the
// dashboard may wait on one, so every page shows them, not only the chat. Everything is drawn with
// DOM calls and textContent.
"use strict";

(() => {
  const box = document.querySelector("[data-question]");
  const waiting = new Map();  // questions not answered yet, oldest first
  const names = { once: "Run once", always: "Always", deny: "Deny", accept: "Submit", decline: "Decline", cancel: "Cancel" };

  function field(spec) {
    const label = document.createElement("label");
    label.textContent = spec.label + (spec.required ? "" : " (optional)");
    label.htmlFor = `field-${spec.name}`;
    let input;
    if (spec.type === "choice") {
      input = document.createElement("select");
      for (const [value, title] of spec.options) {
        const option = document.createElement("option");
        option.value = String(value);
        option.textContent = title;
        option.selected = value === spec.default;
        input.appendChild(option);
      }
    } else {
      input = document.createElement("input");
      input.type = spec.type === "boolean" ? "checkbox" : (spec.type === "number" || spec.type === "integer") ? "number" : "text";
      if (spec.type === "boolean") { input.checked = spec.default === true; }
      else if (spec.default !== undefined && spec.default !== null) { input.value = String(spec.default); }
    }
    input.id = label.htmlFor;
    input.name = spec.name;
    const paragraph = document.createElement("p");
    paragraph.append(label, input);
    if (spec.description) {
      const hint = document.createElement("small");
      hint.textContent = spec.description;
      paragraph.appendChild(hint);
    }
    return paragraph;
  }

  function show() {
    const question = waiting.values().next().value;
    box.hidden = !question;
    if (!question) { return; }
    box.dataset.id = question.id;
    box.querySelector("[data-question-text]").textContent = question.text;
    box.querySelector("[data-question-error]").textContent = "";
    const detail = box.querySelector("[data-question-detail]");
    const shown = question.arguments ? JSON.stringify(question.arguments, null, 2) : question.url || "";
    detail.hidden = !shown;
    detail.textContent = shown;
    box.querySelector("[data-question-form]").replaceChildren(...(question.fields || []).map(field));
    const buttons = box.querySelector("[data-question-buttons]");
    buttons.replaceChildren(...(question.choices || []).map((choice) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = names[choice] || choice;
      button.dataset.choice = choice;
      button.onclick = () => reply(question.id, choice);
      return button;
    }));
    box.scrollIntoView({ block: "nearest" });
    buttons.firstChild.focus();
  }

  function reply(id, choice) {
    const values = {};
    for (const input of box.querySelectorAll("[data-question-form] [name]")) {
      values[input.name] = input.type === "checkbox" ? input.checked : input.value;
    }
    fetch("/chat/answer", {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, choice, values }),
    }).then((answer) => answer.ok ? null : answer.json().then((data) => {
      box.querySelector("[data-question-error]").textContent = data.error || `HTTP ${answer.status}`;
    }));
  }

  // From the render on: what happened since comes on the stream, what was asked before from /questions.
  const events = new EventSource(`/chat/events?after=${Number(document.body.dataset.seq || 0)}`);
  events.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "question") { waiting.set(event.id, event); show(); }
    if (event.type === "answered") { waiting.delete(event.id); show(); }
    document.dispatchEvent(new CustomEvent("hermes:event", { detail: event }));
  };
  fetch("/questions", { credentials: "same-origin" }).then((answer) => answer.json()).then((state) => {
    for (const question of state.pending) { if (!waiting.has(question.id)) { waiting.set(question.id, question); } }
    show();
  });
})();
