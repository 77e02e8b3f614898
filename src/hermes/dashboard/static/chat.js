// The chat page: sends what the user types, follows the agent's events, and answers its questions.
// Every event is drawn with textContent and DOM calls: nothing the model, a tool or a server says
// is ever read as markup.
"use strict";

const root = document.querySelector("[data-chat]");
const conversation = root.querySelector("[data-conversation]");
const status = root.querySelector("[data-status]");
const box = root.querySelector("[data-question]");
let seq = Number(root.dataset.seq || 0);
let answer = null;  // the assistant's message being written
const tools = new Map();

function post(path, body) {
  return fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  }).then((reply) => reply.json().then((data) => {
    if (!reply.ok) { throw new Error(data.error || `HTTP ${reply.status}`); }
    return data;
  }));
}

function line(kind, text) {
  const item = document.createElement("li");
  item.className = kind;
  item.textContent = text;
  conversation.appendChild(item);
  item.scrollIntoView({ block: "end" });
  return item;
}

function ask(event) {
  box.hidden = false;
  box.dataset.id = event.id;
  box.querySelector("[data-question-text]").textContent = event.text;
  const detail = box.querySelector("[data-question-detail]");
  const shown = event.arguments ? JSON.stringify(event.arguments, null, 2) : event.url || "";
  detail.hidden = !shown;
  detail.textContent = shown;
  const form = box.querySelector("[data-question-form]");
  form.replaceChildren();
  for (const field of event.fields || []) {
    const label = document.createElement("label");
    label.textContent = field.label + (field.required ? "" : " (optional)");
    const id = `field-${field.name}`;
    label.htmlFor = id;
    let input;
    if (field.type === "choice") {
      input = document.createElement("select");
      for (const [value, title] of field.options) {
        const option = document.createElement("option");
        option.value = String(value);
        option.textContent = title;
        option.selected = value === field.default;
        input.appendChild(option);
      }
    } else {
      input = document.createElement("input");
      input.type = field.type === "boolean" ? "checkbox" : (field.type === "number" || field.type === "integer") ? "number" : "text";
      if (field.type === "boolean") { input.checked = field.default === true; }
      else if (field.default !== undefined && field.default !== null) { input.value = String(field.default); }
    }
    input.id = id;
    input.name = field.name;
    const paragraph = document.createElement("p");
    paragraph.append(label, input);
    form.appendChild(paragraph);
  }
  const buttons = box.querySelector("[data-question-buttons]");
  buttons.replaceChildren();
  const names = { once: "Run once", always: "Always", deny: "Deny", accept: "Submit", decline: "Decline", cancel: "Cancel" };
  for (const choice of event.choices || []) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = names[choice] || choice;
    button.dataset.choice = choice;
    button.onclick = () => reply(choice);
    buttons.appendChild(button);
  }
  buttons.firstChild.focus();
}

function reply(choice) {
  const values = {};
  for (const input of box.querySelectorAll("[data-question-form] [name]")) {
    values[input.name] = input.type === "checkbox" ? input.checked : input.value;
  }
  post("/chat/answer", { id: box.dataset.id, choice, values })
    .catch((error) => { status.textContent = error.message; });
}

const handlers = {
  user: (event) => { line("user", event.text); answer = null; },
  text: (event) => { if (!answer) { answer = line("assistant", ""); } answer.textContent += event.text; },
  waiting: (event) => { status.textContent = event.model ? `Waiting for ${event.model}…` : ""; },
  tool: (event) => { tools.set(event.id, line("tool", `⚙ ${event.name} …`)); answer = null; },
  tool_done: (event) => {
    const item = tools.get(event.id) || line("tool", "");
    item.textContent = `⚙ ${event.name}: ${event.status} (${event.seconds} s) ${event.summary}`;
  },
  progress: (event) => { status.textContent = `${event.message || "working"} ${event.progress}${event.total ? "/" + event.total : ""}`; },
  notice: (event) => { line("notice", event.text); },
  question: ask,
  answered: (event) => { if (box.dataset.id === event.id) { box.hidden = true; } },
  answer: (event) => { if (!answer && event.text) { line("assistant", event.text); } answer = null; status.textContent = ""; },
  stopped: (event) => { line("notice", event.text); answer = null; },
  error: (event) => { line("error", event.text); answer = null; },
  new: () => { conversation.replaceChildren(); line("notice", "A new conversation."); },
  resumed: (event) => { conversation.replaceChildren(); line("notice", `Took up ${event.id} (${event.messages} messages): ${event.first}`); },
};

const events = new EventSource(`/chat/events?after=${seq}`);
events.onmessage = (message) => {
  const event = JSON.parse(message.data);
  if (event.seq <= seq) { return; }
  seq = event.seq;
  const handler = handlers[event.type];
  if (handler) { handler(event); }
  root.dataset.seen = String(seq);
};

root.querySelector("[data-send]").addEventListener("submit", (event) => {
  event.preventDefault();
  const field = root.querySelector("#message");
  const text = field.value;
  if (!text.trim()) { return; }
  post("/chat/send", { text }).then(() => { field.value = ""; })
    .catch((error) => { status.textContent = error.message; });
});
root.querySelector("[data-stop]").onclick = () => post("/chat/stop");
root.querySelector("[data-new]").onclick = () => post("/chat/new").catch((error) => { status.textContent = error.message; });
for (const button of root.querySelectorAll("[data-resume]")) {
  button.onclick = () => post("/chat/resume", { id: button.dataset.resume }).catch((error) => { status.textContent = error.message; });
}
