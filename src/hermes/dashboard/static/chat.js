// The chat page: sends what the user types and follows the agent's events (questions are
// questions.js's, on every page).
// Every event is drawn with textContent and DOM calls: nothing the model, a tool or a server says
// is ever read as markup.
"use strict";

const root = document.querySelector("[data-chat]");
const conversation = root.querySelector("[data-conversation]");
const status = root.querySelector("[data-status]");
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
  answer: (event) => { if (!answer && event.text) { line("assistant", event.text); } answer = null; status.textContent = ""; },
  stopped: (event) => { line("notice", event.text); answer = null; },
  error: (event) => { line("error", event.text); answer = null; },
  new: () => { conversation.replaceChildren(); line("notice", "A new conversation."); },
  resumed: (event) => { conversation.replaceChildren(); line("notice", `Took up ${event.id} (${event.messages} messages): ${event.first}`); },
};

document.addEventListener("hermes:event", (message) => {  // the page's one stream (questions.js)
  const event = message.detail;
  if (event.seq <= seq) { return; }
  seq = event.seq;
  const handler = handlers[event.type];
  if (handler) { handler(event); }
  root.dataset.seen = String(seq);
});

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
