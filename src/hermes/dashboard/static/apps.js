// The host side of the MCP Apps bridge, for the view in this page's sandboxed frame.
//
// The frame's document runs in an opaque origin: it can only post messages to this page. Each
// message is JSON-RPC; this script answers the view's requests, hands it the tool's input and
// result, and forwards what it asks to the dashboard with the page's own credentials. A tool
// call reaches only the view's own server, under the same permission rules a model meets; a call
// that asks first shows the user a question here, outside the frame. Nothing the view says is
// ever inserted as markup: it is shown with textContent.
"use strict";

const PROTOCOLS = ["2026-01-26", "2025-11-21"];
const frame = document.querySelector("iframe[data-view]");
const view = frame.dataset.view;
let state = null;

function toView(message) {
  // The frame's origin is opaque ("null"), so no narrower target can be named; the frame itself is
  // the only recipient, and it carries nothing secret.
  frame.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
}

function ask(path, body) {
  return fetch(`/views/${encodeURIComponent(view)}/${path}`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  }).then((answer) => answer.json().then((data) => {
    if (!answer.ok) { throw new Error(data.error || `HTTP ${answer.status}`); }
    return data;
  }));
}

function show(kind, text) {
  const item = document.createElement("li");
  item.dataset.kind = kind;
  item.textContent = `${kind}: ${text}`;
  document.querySelector("[data-said]").appendChild(item);
}

let approvals = Promise.resolve();  // one question at a time: a second call waits for the first answer

function approve(question) {
  const asked = approvals.then(() => askOnce(question));
  approvals = asked.catch(() => false);
  return asked;
}

function askOnce(question) {
  const box = document.querySelector("[data-approval]");
  box.querySelector("p").textContent = question;
  box.hidden = false;
  box.querySelector("[data-approve]").focus();
  return new Promise((resolve) => {
    const done = (yes) => () => { box.hidden = true; resolve(yes); };
    box.querySelector("[data-approve]").onclick = done(true);
    box.querySelector("[data-refuse]").onclick = done(false);
  });
}

async function callTool(params) {
  const body = { name: String(params.name || ""), arguments: params.arguments || {} };
  let answer = await ask("call", body);
  if (answer.needsApproval) {
    const yes = await approve(`The view asks to run ${answer.tool}, which asks first (${answer.because}).`);
    if (!yes) { throw new Error("The user refused the call."); }
    answer = await ask("call", Object.assign(body, { approved: true }));
  }
  return answer.result;
}

function textOf(content) {
  return (content || []).filter((block) => block && block.type === "text").map((block) => block.text).join("\n");
}

const handlers = {
  "ui/initialize": (params) => ({
    protocolVersion: PROTOCOLS.includes(params.protocolVersion) ? params.protocolVersion : PROTOCOLS[0],
    hostInfo: { name: "hermes", version: document.documentElement.dataset.version || "dashboard" },
    hostCapabilities: { serverTools: {}, logging: {}, openLinks: {}, message: { text: {} } },
    hostContext: {
      toolInfo: { tool: state.tool }, theme: "light", displayMode: "inline", availableDisplayModes: ["inline"],
      platform: "web", locale: navigator.language,
      containerDimensions: { width: frame.clientWidth, maxHeight: 2000 },
    },
  }),
  "ping": () => ({}),
  "tools/call": (params) => callTool(params || {}),
  "ui/message": (params) => ask("said", { kind: "message", text: textOf(params && params.content) })
    .then(() => { show("message", textOf(params.content)); return {}; }),
  "ui/open-link": (params) => ask("said", { kind: "link", text: String(params && params.url) })
    .then(() => { show("link (not opened; copy it if you trust it)", String(params.url)); return {}; }),
  "ui/update-model-context": () => ({}),
  "ui/request-display-mode": () => ({ mode: "inline" }),
};

const notifications = {
  "ui/notifications/initialized": () => {
    toView({ method: "ui/notifications/tool-input", params: { arguments: state.arguments } });
    toView({ method: "ui/notifications/tool-result", params: state.result });
  },
  "ui/notifications/size-changed": (params) => {
    const height = Number(params && params.height);
    if (height > 0) { frame.style.height = `${Math.min(Math.max(height, 120), 2000)}px`; }
  },
  "notifications/message": (params) => {
    const text = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
    ask("said", { kind: "log", text }).then(() => show("log", text)).catch(() => {});
  },
};

const early = [];  // what the view said before the tool's state arrived

window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) { return; }
  if (state === null) { early.push(event.data); } else { handle(event.data); }
});

function handle(message) {
  if (!message || message.jsonrpc !== "2.0" || typeof message.method !== "string") { return; }
  if (message.id === undefined) {
    const notify = notifications[message.method];
    if (notify) { notify(message.params || {}); }
    return;
  }
  const handler = handlers[message.method];
  if (!handler) {
    toView({ id: message.id, error: { code: -32601, message: `hermes does not offer ${message.method} to views` } });
    return;
  }
  Promise.resolve()
    .then(() => handler(message.params || {}))
    .then((result) => toView({ id: message.id, result }))
    .catch((error) => toView({ id: message.id, error: { code: -32000, message: String(error.message || error) } }));
}

fetch(`/views/${encodeURIComponent(view)}/state`, { credentials: "same-origin" })
  .then((answer) => answer.json())
  .then((data) => {
    state = data;
    (data.said || []).forEach((item) => show(item.kind, item.text));
    early.splice(0).forEach(handle);
  });
