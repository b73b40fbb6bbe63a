// Live view of one hermes run (anywidget front end of kernel/view.py).
//
// The model's `state` always holds the whole run so far, so rendering is a pure
// function of it; only segments whose content changed are re-rendered. The Stop
// button posts to the server directly: the kernel is blocked inside the magic
// and cannot receive comm messages until the run is over.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);

// A deliberately small markdown subset. Everything is escaped first, so agent
// text can never inject markup; only the patterns below become HTML.
function inline(text) {
  const codes = [];
  let out = text.replace(/`([^`\n]+)`/g, (_, code) => `\u0000${codes.push(code) - 1}\u0000`);
  out = out
    .replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^*])\*([^*\n]+)\*/g, "$1<em>$2</em>")
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2" target="_blank" rel="noopener noreferrer">$1</a>');
  return out.replace(/\u0000(\d+)\u0000/g, (_, i) => `<code>${codes[Number(i)]}</code>`);
}

function paragraph(lines) {
  const list = lines.every((l) => /^\s*([-*]|\d+\.)\s+/.test(l));
  if (list) {
    const tag = /^\s*\d+\./.test(lines[0]) ? "ol" : "ul";
    const items = lines.map((l) => `<li>${inline(l.replace(/^\s*([-*]|\d+\.)\s+/, ""))}</li>`);
    return `<${tag}>${items.join("")}</${tag}>`;
  }
  const heading = /^(#{1,6})\s+(.*)$/.exec(lines[0]);
  if (heading && lines.length === 1) {
    const level = Math.min(6, heading[1].length + 2);
    return `<h${level}>${inline(heading[2])}</h${level}>`;
  }
  if (lines.every((l) => l.startsWith("&gt;"))) {
    return `<blockquote>${markdown(lines.map((l) => l.replace(/^&gt; ?/, "")).join("\n"))}</blockquote>`;
  }
  return `<p>${lines.map(inline).join("<br>")}</p>`;
}

export function markdown(source) {
  const parts = escapeHtml(source).split(/^```[^\n]*\n([\s\S]*?)^```\s*$/m);
  let html = "";
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      // Copy only: the kernel widget cannot reach the notebook (Insert/Replace live in the Lab renderer).
      html += `<div class="hermes-code"><button class="hermes-copy" type="button" title="Copy the code">Copy</button>` +
        `<pre><code>${part}</code></pre></div>`;
      return;
    }
    for (const block of part.split(/\n\s*\n/)) {
      const lines = block.split("\n").filter((l) => l.trim() !== "");
      if (lines.length) html += paragraph(lines);
    }
  });
  return html;
}

function toolHtml(tool) {
  const duration = tool.duration_s == null ? "" : ` · ${Number(tool.duration_s).toFixed(2)} s`;
  const args = tool.args ? ` <code>${escapeHtml(tool.args)}</code>` : "";
  const preview = tool.preview ? `<pre class="hermes-tool-preview">${escapeHtml(tool.preview)}</pre>` : "";
  // A pending approval gets its two answers; nothing runs until one is clicked.
  const asking = tool.name === "approval" && tool.status === "running" && tool.tid;
  const answers = asking
    ? `<div class="hermes-approval">` +
      `<button class="hermes-approve" data-approval-id="${escapeHtml(tool.tid)}" data-choice="allow_once">Allow once</button>` +
      `<button class="hermes-approve" data-approval-id="${escapeHtml(tool.tid)}" data-choice="deny">Deny</button></div>`
    : "";
  return (
    `<div class="hermes-tool hermes-tool-${escapeHtml(tool.status)}">` +
    `<div class="hermes-tool-head"><strong>${escapeHtml(tool.name)}</strong>${args}` +
    ` · <span class="hermes-tool-status">${escapeHtml(tool.status)}</span>${duration}</div>${preview}${answers}` +
    `${tool.name === "question" && tool.status === "running" ? questionHtml(tool) : ""}</div>`
  );
}

// A pending question: its choices as buttons, and a box for an answer in the user's own words.
function questionHtml(tool) {
  const id = escapeHtml(tool.tid);
  const choices = (tool.choices || []).map(
    (c) => `<button class="hermes-answer" data-clarify-id="${id}" data-answer="${escapeHtml(c)}">${escapeHtml(c)}</button>`,
  );
  return (
    `<form class="hermes-clarify" data-clarify-id="${id}">${choices.join("")}` +
    `<input class="hermes-clarify-text" type="text" placeholder="Or type an answer…" aria-label="Your answer">` +
    `<button class="hermes-answer" type="submit" data-clarify-id="${id}">Send</button></form>`
  );
}

function segmentHtml(segment, open) {
  let html = "";
  if (segment.reasoning) {
    html +=
      `<details class="hermes-reasoning"${open ? " open" : ""}><summary>Reasoning</summary>` +
      `<div>${markdown(segment.reasoning)}</div></details>`;
  }
  if (segment.text) html += `<div class="hermes-text">${markdown(segment.text)}</div>`;
  for (const tool of segment.tools || []) html += toolHtml(tool);
  return html;
}

function pageConfig() {
  const el = document.getElementById("jupyter-config-data");
  try {
    return el ? JSON.parse(el.textContent || "{}") : {};
  } catch {
    return {};
  }
}

function cookie(name) {
  const match = document.cookie.match(new RegExp(`(?:^|;\\s*)${name}=([^;]*)`));
  return match ? decodeURIComponent(match[1]) : undefined;
}

// POST {baseUrl}hermes/api/runs/{run_id}/{action} with the page's XSRF cookie (and token, if any).
const postRun = (model, action, body = {}) =>
  post(model, `runs/${encodeURIComponent(model.get("run_id"))}/${action}`, body);

async function post(model, path, body) {
  const config = pageConfig();
  let base = config.baseUrl || model.get("base_path") || "/";
  if (!base.endsWith("/")) base += "/";
  const headers = { "Content-Type": "application/json" };
  const xsrf = cookie("_xsrf");
  if (xsrf) headers["X-XSRFToken"] = xsrf;
  if (config.token) headers["Authorization"] = `token ${config.token}`;
  const url = `${base}hermes/api/${path}`;
  const response = await fetch(url, { method: "POST", headers, credentials: "same-origin", body: JSON.stringify(body) });
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).message || message;
    } catch {}
    throw new Error(`${response.status} ${message}`);
  }
}

// Which reasoning blocks a reader opened, per run: views are re-created when the display refreshes.
const openReasoning = new Map();

function render({ model, el }) {
  el.classList.add("hermes-run");
  const body = document.createElement("div");
  body.className = "hermes-body";
  const ending = document.createElement("blockquote");
  ending.className = "hermes-ending";
  const footer = document.createElement("div");
  footer.className = "hermes-footer";
  const status = document.createElement("span");
  status.className = "hermes-status";
  const stop = document.createElement("button");
  stop.className = "hermes-stop";
  // The words every client shares (hermes_jupyter/wording.py), sent with the widget.
  const words = model.get("words") || {};
  stop.textContent = words.stop;
  stop.title = words.stop_title;
  const error = document.createElement("span");
  error.className = "hermes-error";
  // Continue: an answer that ended interrupted or stopped carries on as a new run on the server.
  const resume = document.createElement("button");
  resume.className = "hermes-continue";
  resume.textContent = words.continue;
  resume.title = words.continue_title;
  footer.append(status, stop, resume, error);
  el.append(body, ending, footer);

  const runId = model.get("run_id");
  const opened = openReasoning.get(runId) || new Set();
  openReasoning.set(runId, opened);
  const rendered = [];
  let stopping = false;

  body.addEventListener("toggle", (event) => {
    const index = [...body.children].indexOf(event.target.closest(".hermes-segment"));
    if (index >= 0) (event.target.open ? opened.add(index) : opened.delete(index));
  }, true);

  // Answers to a question: a choice's button, or the typed text (Enter or Send).
  body.addEventListener("click", (event) => {
    const button = event.target.closest(".hermes-answer[data-answer]");
    if (button) {
      event.preventDefault();
      void answerQuestion(button.closest("form"), button.dataset.answer);
    }
  });
  body.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target.closest("form.hermes-clarify");
    const text = form?.querySelector(".hermes-clarify-text")?.value.trim();
    if (text) void answerQuestion(form, text);
  });

  async function answerQuestion(form, answer) {
    const controls = form.querySelectorAll("button, input");
    for (const c of controls) c.disabled = true;
    error.textContent = "";
    try {
      await postRun(model, `clarify/${encodeURIComponent(form.dataset.clarifyId)}`, { answer });
    } catch (err) {
      error.textContent = `Answer failed: ${err.message}`;
      for (const c of controls) c.disabled = false;
    }
  }

  body.addEventListener("click", async (event) => {
    const copy = event.target.closest(".hermes-copy");
    if (copy) {
      const code = copy.parentElement.querySelector("code").textContent.replace(/\n$/, "");
      try {
        await navigator.clipboard.writeText(code);
        copy.textContent = "Copied";
      } catch (err) {
        copy.textContent = "Copy failed";
      }
      return;
    }
    const button = event.target.closest(".hermes-approve");
    if (!button) return;
    for (const b of button.parentElement.querySelectorAll("button")) b.disabled = true;
    error.textContent = "";
    try {
      const id = encodeURIComponent(button.dataset.approvalId);
      await postRun(model, `approvals/${id}`, { choice: button.dataset.choice });
    } catch (err) {
      error.textContent = `Answer failed: ${err.message}`;
      for (const b of button.parentElement.querySelectorAll("button")) b.disabled = false;
    }
  });

  resume.addEventListener("click", async () => {
    resume.disabled = true;
    error.textContent = "";
    try {
      await post(model, `sessions/${encodeURIComponent(model.get("session_id"))}/continue`, {});
      error.textContent = "Continuing: the rest of the answer streams into the Hermes sidebar.";
    } catch (err) {
      resume.disabled = false;
      error.textContent = `Continue failed: ${err.message}`;
    }
  });

  stop.addEventListener("click", async () => {
    stopping = true;
    error.textContent = "";
    update();
    try {
      await postRun(model, "cancel");
    } catch (err) {
      stopping = false;
      error.textContent = `Stop failed: ${err.message}. Interrupt the kernel (■) to stop the run.`;
      update();
    }
  });

  function update() {
    const state = model.get("state") || {};
    const segments = state.segments || [];
    segments.forEach((segment, i) => {
      const key = JSON.stringify(segment);
      if (rendered[i] === key) return;
      let node = body.children[i];
      if (!node) {
        node = document.createElement("div");
        node.className = "hermes-segment";
        body.append(node);
      }
      node.innerHTML = segmentHtml(segment, opened.has(i));
      rendered[i] = key;
    });
    while (body.children.length > segments.length) body.lastElementChild.remove();
    rendered.length = segments.length;
    ending.innerHTML = state.ending ? markdown(state.ending) : "";
    ending.hidden = !state.ending;
    const running = (state.status || "running") === "running";
    status.textContent = state.queued
      ? words.queued
      : running ? `● streaming… (${state.seq || 0} events)` : `hermes · ${state.status}`;
    status.dataset.status = state.queued ? "queued" : state.status || "running";
    stop.hidden = !running;
    resume.hidden = state.status !== "cancelled" && state.status !== "interrupted";
    stop.disabled = stopping;
    stop.textContent = stopping ? words.stopping : state.queued ? words.unqueue : words.stop;
    stop.title = state.queued ? words.unqueue_title : words.stop_title;
  }

  model.on("change:state", update);
  update();
  return () => model.off("change:state", update);
}

export default { render };
