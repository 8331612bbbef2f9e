/* svc dashboard: fills the server-rendered pages from the JSON API (same origin, the
 * session cookie). Plain JavaScript, no build step, no third-party code. Every API error
 * is shown as a readable message in #messages; nothing is written with innerHTML. */
"use strict";

(function () {
  const page = document.body.dataset.page;
  if (!page || page === "docs") return;

  // The prefix svc is mounted under (SCRIPT_NAME, "" at the root): every call, link and
  // navigation below goes through it, never to an absolute path of the host.
  const BASE = document.body.dataset.base || "";
  const $ = (selector) => document.querySelector(selector);
  const messages = $("#messages");
  const notice = $("#notice");

  // ---- small helpers ------------------------------------------------------------------

  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = value;
      else if (key === "text") el.textContent = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else if (value === true) el.setAttribute(key, "");
      else el.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
    for (const child of children) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function when(iso) {
    if (!iso) return "—";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  const number = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"));
  const krw = (n) => (n === null || n === undefined ? "—" : `${number(n)} KRW`);

  class ApiError extends Error {
    constructor(message, code, hint, requestId, status) {
      super(message);
      this.code = code;
      this.hint = hint;
      this.requestId = requestId;
      this.status = status;
    }
  }

  async function api(method, path, body) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(BASE + path, init);
    } catch (err) {
      throw new ApiError("The server could not be reached. Check the connection and try again.", "NETWORK");
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (err) {
      data = null;
    }
    if (!response.ok) {
      const e = (data && data.error) || {};
      throw new ApiError(
        e.message || `The server answered ${response.status} without an explanation.`,
        e.code || `HTTP_${response.status}`,
        e.hint,
        e.request_id,
        response.status,
      );
    }
    return data;
  }

  function clearMessages() {
    messages.replaceChildren();
    notice.replaceChildren();
  }

  // What a refusal asks of the person: a 4xx is theirs to fix or to know (the message
  // and hint say how); only a failure of the server itself, or of the network, "went wrong".
  const LEADS = {
    400: "Please check: ",
    401: "Please sign in again: ",
    402: "Your plan's limit: ",
    403: "Not allowed: ",
    404: "Not found: ",
    409: "Already done: ",
    413: "Too large: ",
    429: "Too many requests: ",
  };
  const leadOf = (status) =>
    !status || status >= 500 ? "Something went wrong: " : LEADS[status] || "Not done: ";

  function showError(err) {
    const parts = [h("p", {}, h("strong", { text: leadOf(err.status) }), err.message || String(err))];
    if (err.hint) parts.push(h("p", { text: err.hint }));
    if (err.status === 401) {
      parts.push(h("p", {}, h("a", { href: `${BASE}/signin`, text: "Sign in again" })));
    }
    const small = [err.code, err.requestId && `request ${err.requestId}`].filter(Boolean).join(" · ");
    if (small) parts.push(h("p", {}, h("small", { text: small })));
    messages.replaceChildren(...parts);
  }

  // Called once the tables are re-rendered: a notice means the page is up to date.
  function say(text) {
    notice.replaceChildren(h("p", { text }));
  }

  function guard(fn) {
    return async (...args) => {
      try {
        await fn(...args);
      } catch (err) {
        showError(err);
      }
    };
  }

  // A form's submit runs ``action(event)`` instead of loading a page; its failure is shown.
  function onSubmit(form, action) {
    form.addEventListener(
      "submit",
      guard(async (event) => {
        event.preventDefault();
        await action(event);
      }),
    );
  }

  window.addEventListener("unhandledrejection", (event) => showError(event.reason || "unknown error"));

  function fillTable(table, rows, emptyText) {
    const body = table.tBodies[0];
    const columns = table.tHead.rows[0].cells.length;
    if (!rows.length) {
      body.replaceChildren(h("tr", {}, h("td", { colspan: columns, text: emptyText })));
      return;
    }
    body.replaceChildren(...rows);
  }

  function cell(value, cls) {
    return h("td", { class: cls, text: value === null || value === undefined || value === "" ? "—" : value });
  }

  function ask(name, target) {
    const dialog = $(`#${name}-dialog`);
    dialog.querySelectorAll(".target-name").forEach((el) => {
      el.textContent = target;
    });
    dialog.returnValue = "";
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
      dialog.showModal();
    });
  }

  // ---- the caller's role: owners and admins write, members read --------------------------
  // The role comes from the usage answer. Until it is known the write controls (.manage)
  // are invisible (CSS); a member then sees the page's note (.role-note) instead of them.

  let role = null;
  const canManage = () => role === "owner" || role === "admin";
  const ROLE_TEXT = {
    owner: "owner: manages keys, webhooks and the team",
    admin: "admin: manages keys, webhooks and the team",
    member: "member: reads; an owner or admin makes changes",
  };

  function applyRole(value) {
    role = value;
    document.body.dataset.role = value;
    document.querySelectorAll(".manage").forEach((el) => {
      el.hidden = !canManage();
    });
    document.querySelectorAll(".role-note").forEach((el) => {
      el.hidden = canManage();
    });
  }

  async function loadRole() {
    const usage = (await api("GET", "/api/auth/me/usage")).data;
    applyRole(usage.role);
    return usage;
  }

  // A table cell of row actions, or a dash when the caller may do none of them.
  function actionsCell(...buttons) {
    const shown = buttons.filter(Boolean);
    return h("td", {}, shown.length ? h("div", { class: "actions" }, ...shown) : "—");
  }

  // ---- the once-shown secret (API key or webhook signing secret) -----------------------

  // ``note`` says what svc keeps: only a digest of an API key, but a webhook signing
  // secret itself (it signs every delivery with it).
  function showSecret(title, label, value, note) {
    const panel = $("#secret-panel");
    $("#secret-title").textContent = title;
    $("#secret-note").textContent = note;
    $("#secret-label").textContent = label;
    $("#secret-value").value = value;
    $("#copy-status").textContent = "";
    panel.hidden = false;
    panel.focus();
  }

  // The button copies the field's text to the clipboard, or selects it where the browser
  // refuses, and the status says which.
  function copyOnClick(button, field, status) {
    $(button).addEventListener("click", async () => {
      const input = $(field);
      try {
        await navigator.clipboard.writeText(input.value);
        $(status).textContent = "Copied to the clipboard.";
      } catch (err) {
        input.select();
        $(status).textContent = "Selected: press Ctrl+C (⌘C) to copy.";
      }
    });
  }

  function setupSecretPanel(afterDismiss) {
    const panel = $("#secret-panel");
    if (!panel) return;
    copyOnClick("#copy-secret", "#secret-value", "#copy-status");
    $("#dismiss-secret").addEventListener("click", () => {
      $("#secret-value").value = "";
      panel.hidden = true;
      if (afterDismiss) afterDismiss();
    });
  }

  const signOut = $("#sign-out");
  if (signOut) {
    signOut.addEventListener(
      "click",
      guard(async () => {
        await api("DELETE", "/api/auth/session");
        window.location.assign(`${BASE}/signin`);
      }),
    );
  }

  // ---- the account switcher (header): a person in several accounts picks which one the
  // dashboard acts on; the server checks the membership on every request.

  const accountForm = $("#account-form");
  if (accountForm) {
    onSubmit(accountForm, async () => {
      clearMessages();
      const id = $("#account-switch").value;
      await api("POST", `/api/auth/me/accounts/${encodeURIComponent(id)}/switch`);
      window.location.reload();
    });
  }

  // ---- sign-in ---------------------------------------------------------------------------

  // Where sign-in goes next: the dashboard page that sent the visitor here (``next``,
  // a path of this site's dashboard only), else the overview.
  function nextPage() {
    const wanted = new URLSearchParams(window.location.search).get("next") || "";
    return /^\/dashboard(\/[a-z]+)?(\?[^#\\]*)?$/.test(wanted) ? BASE + wanted : `${BASE}/dashboard`;
  }

  function signinPage() {
    const next = nextPage();
    $("#continue a").href = next;
    const done = (data) => {
      if (data.data.api_key) {
        showSecret("Your first API key", "API key", data.data.api_key, "svc keeps only a digest of it.");
        $("#continue").hidden = false;
      } else {
        window.location.assign(next);
      }
    };
    setupSecretPanel(() => $("#continue a").focus());
    const devForm = $("#dev-signin-form");
    if (devForm) {
      onSubmit(devForm, async () => {
        clearMessages();
        done(await api("POST", "/api/auth/dev-session", { email: $("#signin-email").value.trim() }));
      });
    }
    const tokenForm = $("#token-signin-form");
    if (tokenForm) {
      onSubmit(tokenForm, async () => {
        clearMessages();
        done(await api("POST", "/api/auth/session", { jwt: $("#signin-token").value.trim() }));
      });
    }
  }

  // ---- overview ----------------------------------------------------------------------------

  function facts(dl, pairs) {
    dl.replaceChildren(...pairs.flatMap(([term, value]) => [h("dt", { text: term }), h("dd", { text: value })]));
  }

  const DAY_MS = 86400000;

  // The smallest whole step of 1, 2, 2.5 or 5 times a power of ten that is at least ``v``.
  function gridStep(v) {
    for (let power = 1; ; power *= 10) {
      for (const f of [1, 2, 2.5, 5]) {
        const step = f * power;
        if (Number.isInteger(step) && step >= v) return step;
      }
    }
  }

  // Calls per day over the whole UTC month: live calls as a line with a point on each
  // day that had calls, test calls dashed (when there are any). Days after today are
  // left empty; the table below the chart lists every day with calls.
  function drawDaily(usage) {
    const days = usage.daily;
    const period = usage.current_period;
    const monthDays = Math.round((Date.parse(period.resets_at) - Date.parse(period.starts_at)) / DAY_MS);
    const W = 760;
    const H = 260;
    const m = { l: 56, r: 24, t: 36, b: 40 };
    const top = Math.max(1, ...days.map((d) => Math.max(d.calls, d.test_calls)));
    const y1 = 4 * gridStep(top / 4);
    const x = (i) => m.l + ((W - m.l - m.r) * i) / Math.max(1, monthDays - 1);
    const y = (v) => m.t + (H - m.t - m.b) * (1 - v / y1);
    const withCalls = days.filter((d) => d.calls > 0);
    const withTests = days.filter((d) => d.test_calls > 0);

    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "daily-title daily-desc" });
    svg.append(
      s("title", { id: "daily-title" }, `Calls per day, ${period.month} (UTC)`),
      s(
        "desc",
        { id: "daily-desc" },
        `Successful live calls per day from ${days[0].date} to ${days[days.length - 1].date}: ` +
          `${number(period.requests_used)} in all, on ${withCalls.length} day(s). The table below lists every day with calls.`,
      ),
    );
    for (let i = 0; i <= 4; i += 1) {
      const v = (y1 * i) / 4;
      svg.append(
        s("line", { class: "chart-grid", x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }),
        s("text", { class: "chart-label", x: m.l - 8, y: y(v) + 4, "text-anchor": "end" }, number(v)),
      );
    }
    svg.append(
      s("line", { class: "chart-axis", x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }),
      s("line", { class: "chart-axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }),
      s("text", { class: "chart-label", x: 8, y: m.t - 14 }, "calls"),
    );
    for (const day of [1, 5, 10, 15, 20, 25, monthDays]) {
      svg.append(s("text", { class: "chart-label", x: x(day - 1), y: H - m.b + 18, "text-anchor": "middle" }, day));
    }
    const line = (key) => days.map((d, i) => `${x(i)},${y(d[key])}`).join(" ");
    if (withTests.length) svg.append(s("polyline", { class: "chart-test", points: line("test_calls") }));
    svg.append(s("polyline", { class: "chart-calls", points: line("calls") }));
    days.forEach((d, i) => {
      if (d.test_calls > 0) {
        svg.append(
          s(
            "circle",
            { class: "chart-test-point", cx: x(i), cy: y(d.test_calls), r: 3.5, "data-date": d.date },
            s("title", {}, `${d.date}: ${number(d.test_calls)} test call(s)`),
          ),
        );
      }
      if (d.calls > 0) {
        svg.append(
          s(
            "circle",
            { class: "chart-point", cx: x(i), cy: y(d.calls), r: 4.5, "data-date": d.date, "data-calls": d.calls },
            s("title", {}, `${d.date}: ${number(d.calls)} live call(s)`),
          ),
        );
      }
    });
    const lx = W - m.r - 220;
    svg.append(
      s("circle", { class: "chart-legend-calls", cx: lx, cy: 16, r: 4.5 }),
      s("text", { class: "chart-label", x: lx + 10, y: 20 }, "live calls"),
    );
    if (withTests.length) {
      svg.append(
        s("line", { class: "chart-test", x1: lx + 100, x2: lx + 124, y1: 16, y2: 16 }),
        s("text", { class: "chart-label", x: lx + 130, y: 20 }, "test calls"),
      );
    }
    $("#daily-chart").replaceChildren(svg);
    $("#daily-note").textContent = withCalls.length || withTests.length
      ? `${number(period.requests_used)} live call(s) on ${withCalls.length} day(s) this month; ` +
        `${number(withTests.reduce((n, d) => n + d.test_calls, 0))} test call(s). Days are UTC.`
      : "No successful calls with an API key this month yet. Days are UTC.";
    fillTable(
      $("#days-table"),
      days
        .filter((d) => d.calls > 0 || d.test_calls > 0)
        .map((d) => h("tr", { "data-date": d.date }, cell(d.date), cell(number(d.calls), "num"), cell(number(d.test_calls), "num"))),
      "No calls this month yet.",
    );
  }

  async function overviewPage() {
    const usage = await loadRole();
    const period = usage.current_period;
    facts($("#plan-facts"), [
      ["Plan", usage.plan],
      ["Your role", ROLE_TEXT[usage.role] || usage.role],
      ["Monthly quota", `${number(usage.limits.monthly_request_quota)} live calls`],
      ["Per-minute limit", `${number(usage.limits.rate_limit_per_minute)} calls per minute`],
    ]);
    const bar = $("#quota-bar");
    bar.max = 100;
    bar.value = period.percent_used;
    $("#quota-text").textContent = `${period.percent_used}% used`;
    facts($("#quota-facts"), [
      ["Month", period.month],
      ["Used", number(period.requests_used)],
      ["Remaining", number(period.requests_remaining)],
      ["Resets at", when(period.resets_at)],
    ]);
    const trial = usage.trial;
    facts($("#trial-facts"), [
      [
        "Trial",
        trial
          ? trial.is_active
            ? `active, ${trial.days_remaining} day(s) left (ends ${when(trial.trial_ends_at)})`
            : `ended ${when(trial.trial_ends_at)}`
          : "no trial",
      ],
      ["Founding member", trial ? (trial.founding_member ? "yes" : "no") : "—"],
      ["Subscription", usage.subscription.status || "none"],
    ]);
    drawDaily(usage);
    drawKeyUsage(usage);
  }

  // Calls this month per key, then the account's total (live calls, what the quota counts).
  function drawKeyUsage(usage) {
    const keys = usage.keys || [];
    const rows = keys.map((k) =>
      h(
        "tr",
        {},
        cell(k.label),
        h("td", {}, h("code", { text: k.prefix })),
        cell(k.mode),
        cell(k.status),
        h("td", { class: "num", text: number(k.calls) }),
      ),
    );
    if (keys.length) {
      rows.push(
        h(
          "tr",
          { class: "total" },
          h("th", { scope: "row", colspan: 4, text: "Account total (live calls, counted against the quota)" }),
          h("td", { class: "num", text: number(usage.current_period.requests_used) }),
        ),
      );
    }
    fillTable($("#key-usage-table"), rows, "This account has no keys.");
  }

  // ---- request log -----------------------------------------------------------------------------

  const LOG_PAGE = 50;

  async function requestsPage() {
    await loadRole();
    const form = $("#log-form");
    const keySelect = $("#log-key");
    const statusSelect = $("#log-status");
    const keys = (await api("GET", "/api/auth/me/keys")).data;
    keySelect.append(
      ...keys.map((k) => h("option", { value: k.id, text: `${k.label} (${k.prefix}, ${k.status})` })),
    );
    // The filters live in the address's fragment (the page itself takes no query), so a
    // filtered view can be reloaded or shared.
    const start = new URLSearchParams(window.location.hash.slice(1));
    if (keys.some((k) => k.id === start.get("key"))) keySelect.value = start.get("key");
    if ([...statusSelect.options].some((o) => o.value === start.get("status"))) {
      statusSelect.value = start.get("status");
    }
    let offset = 0;

    async function show() {
      const q = new URLSearchParams();
      if (keySelect.value) q.set("key", keySelect.value);
      if (statusSelect.value) q.set("status", statusSelect.value);
      const shown = q.toString();
      window.history.replaceState(null, "", shown ? `#${shown}` : window.location.pathname);
      q.set("limit", String(LOG_PAGE));
      q.set("offset", String(offset));
      const page = (await api("GET", `/api/auth/me/requests?${q}`)).data;
      const rows = page.rows.map((r) =>
        h(
          "tr",
          {},
          cell(r.time.replace("T", " ").replace("Z", " UTC")),
          h("td", {}, r.key_prefix ? h("code", { text: r.key_prefix }) : "—", r.key_label ? ` ${r.key_label}` : ""),
          cell(r.method),
          cell(r.path, "path"),
          h(
            "td",
            { class: r.status < 400 ? "status-ok" : "status-bad" },
            String(r.status),
            r.error_code ? h("small", { class: "code", text: ` ${r.error_code}` }) : "",
          ),
          cell(r.request_id, "rid"),
          h("td", { class: "num", text: `${r.duration_ms} ms` }),
        ),
      );
      fillTable($("#log-table"), rows, shown ? "No calls match these filters." : "No calls of this account's keys yet.");
      const returned = page.pagination.returned;
      $("#log-page").textContent = returned ? `calls ${offset + 1} to ${offset + returned}` : "";
      $("#log-prev").disabled = offset === 0;
      $("#log-next").disabled = returned < LOG_PAGE;
      $("#log-note").textContent =
        `Every call made with one of this account's keys, succeeded or refused, kept ${page.retention.days} days ` +
        `(at most the newest ${number(page.retention.max_rows)}). A call shows within a second or two; ` +
        "calls without a valid key (401) belong to no account and are not listed.";
      say(`${returned} call(s) shown.`);
    }

    onSubmit(form, async () => {
      offset = 0;
      await show();
    });
    keySelect.addEventListener("change", guard(async () => { offset = 0; await show(); }));
    statusSelect.addEventListener("change", guard(async () => { offset = 0; await show(); }));
    $("#log-prev").addEventListener("click", guard(async () => { offset = Math.max(0, offset - LOG_PAGE); await show(); }));
    $("#log-next").addEventListener("click", guard(async () => { offset += LOG_PAGE; await show(); }));
    await show();
  }

  // ---- API keys ------------------------------------------------------------------------------

  const cidrs = (text) => text.split(/[\s,]+/).filter(Boolean);

  async function keysPage() {
    setupSecretPanel(() => $("#keys-h").focus());
    $("#keys-h").tabIndex = -1;
    await loadRole();
    const load = async () => {
      const rows = (await api("GET", "/api/auth/me/keys")).data;
      fillTable(
        $("#keys-table"),
        rows.map((key) => {
          const name = `${key.label} (${key.prefix})`;
          const live = canManage() && (key.status === "active" || key.status === "grace");
          const actions = actionsCell(
            live && h("button", { type: "button", class: "secondary", "aria-label": `Edit key ${name}`, onclick: guard(() => edit(key)) }, "Edit"),
            live && key.status === "active" && h("button", { type: "button", "aria-label": `Rotate key ${name}`, onclick: guard(() => rotate(key, name)) }, "Rotate"),
            live && h("button", { type: "button", class: "danger", "aria-label": `Revoke key ${name}`, onclick: guard(() => revoke(key, name)) }, "Revoke"),
          );
          return h(
            "tr",
            { "data-key-id": key.id, "data-status": key.status },
            cell(key.label),
            h("td", {}, h("code", { text: key.prefix })),
            cell(key.mode),
            cell(key.scope),
            cell((key.ip_allowlist || []).join(", ") || "any address"),
            cell(key.status),
            cell(when(key.created_at)),
            cell(when(key.last_used_at)),
            cell(key.grace_until ? when(key.grace_until) : "—"),
            actions,
          );
        }),
        "No keys yet.",
      );
    };

    const edit = async (key) => {
      $("#edit-label").value = key.label;
      $("#edit-allowlist").value = (key.ip_allowlist || []).join("\n");
      if (!(await ask("edit", key.label))) return;
      clearMessages();
      await api("PATCH", `/api/auth/me/keys/${key.id}`, {
        label: $("#edit-label").value.trim(),
        ip_allowlist: cidrs($("#edit-allowlist").value),
      });
      await load();
      say(`Key ${key.prefix} saved.`);
    };

    const rotate = async (key, name) => {
      if (!(await ask("rotate", name))) return;
      clearMessages();
      const grace = Number($("#rotate-grace").value);
      const out = await api("POST", `/api/auth/me/keys/${key.id}/rotate`, { grace_period_seconds: grace });
      await load();
      say(
        grace
          ? `Key ${key.prefix} rotated; the old key keeps working until ${when(out.previous.grace_until)}.`
          : `Key ${key.prefix} rotated; the old key no longer works.`,
      );
      showSecret(`The new key replacing ${name}`, "API key", out.data.key, "svc keeps only a digest of it.");
    };

    const revoke = async (key, name) => {
      if (!(await ask("revoke", name))) return;
      clearMessages();
      await api("POST", `/api/auth/me/keys/${key.id}/revoke`);
      await load();
      say(`Key ${key.prefix} revoked: it no longer works.`);
    };

    onSubmit($("#key-form"), async (event) => {
      clearMessages();
      const label = $("#key-label").value.trim();
      const row = (
        await api("POST", "/api/auth/me/keys", {
          label,
          mode: $("#key-mode").value,
          scope: $("#key-scope").value,
          ip_allowlist: cidrs($("#key-allowlist").value),
        })
      ).data;
      event.target.reset();
      await load();
      showSecret(`Your new key “${label}”`, "API key", row.key, "svc keeps only a digest of it.");
    });
    await load();
  }

  // ---- webhooks ------------------------------------------------------------------------------

  async function webhooksPage() {
    setupSecretPanel(() => $("#hooks-h").focus());
    $("#hooks-h").tabIndex = -1;
    const PAGE = 10;
    const log = { endpoint: null, offset: 0, total: 0 };
    await loadRole();

    const load = async () => {
      const rows = (await api("GET", "/api/auth/me/webhooks")).data;
      fillTable(
        $("#hooks-table"),
        rows.map((hook) => {
          const name = hook.url;
          const manage = canManage();
          const actions = actionsCell(
            manage && hook.status === "active" && h("button", { type: "button", "aria-label": `Send test to ${name}`, onclick: guard(() => sendTest(hook)) }, "Send test"),
            h("button", { type: "button", class: "secondary", "aria-label": `Show deliveries of ${name}`, onclick: guard(() => openLog(hook, 0)) }, "Deliveries"),
            manage &&
              hook.status === "disabled_after_failure" &&
              h("button", { type: "button", "aria-label": `Re-enable ${name}`, onclick: guard(() => enable(hook)) }, "Re-enable"),
            manage &&
              hook.status !== "revoked" &&
              h("button", { type: "button", class: "danger", "aria-label": `Revoke ${name}`, onclick: guard(() => revoke(hook)) }, "Revoke"),
          );
          return h(
            "tr",
            { "data-endpoint-id": hook.id, "data-status": hook.status },
            h("td", {}, h("code", { text: hook.url })),
            cell(hook.description),
            cell((hook.events || []).join(", ") + filterText(hook.filters)),
            cell(hook.status),
            cell(number(hook.consecutive_failures), "num"),
            cell(when(hook.disabled_at)),
            cell(when(hook.created_at)),
            actions,
          );
        }),
        "No endpoints yet.",
      );
    };

    const sendTest = async (hook) => {
      clearMessages();
      const result = $("#test-result");
      result.className = "result";
      result.textContent = `Sending a test event to ${hook.url}…`;
      const out = (await api("POST", `/api/auth/me/webhooks/${hook.id}/test`)).data;
      await load();
      const d = out.delivery;
      const ok = d.status === "delivered";
      result.className = `result ${ok ? "ok" : "failed"}`;
      result.textContent =
        `Test event ${out.event_id} to ${hook.url}: ${d.status}` +
        (d.http_status ? `, HTTP ${d.http_status}` : "") +
        (d.duration_ms !== null && d.duration_ms !== undefined ? ` in ${d.duration_ms} ms` : "") +
        (d.error ? ` (${d.error})` : "") +
        ".";
      if (log.endpoint && log.endpoint.id === hook.id) await openLog(hook, 0);
    };

    const openLog = async (hook, offset) => {
      const out = (
        await api("GET", `/api/auth/me/webhooks/${hook.id}/deliveries?limit=${PAGE}&offset=${offset}`)
      ).data;
      log.endpoint = hook;
      log.offset = offset;
      log.total = out.summary.total_count;
      $("#deliveries").hidden = false;
      $("#deliveries-h").textContent = `Deliveries to ${hook.url}`;
      $("#delivery-summary").textContent =
        `${number(out.summary.total_count)} in all; last 24 hours: ` +
        `${number(out.summary.delivered_24h)} delivered, ${number(out.summary.failed_24h)} failed.`;
      fillTable(
        $("#deliveries-table"),
        out.rows.map((row) =>
          h(
            "tr",
            {},
            cell(when(row.created_at)),
            cell(row.event_type),
            h("td", {}, h("code", { text: row.event_id })),
            cell(row.status),
            cell(row.http_status, "num"),
            cell(row.duration_ms === null ? null : `${row.duration_ms} ms`, "num"),
            cell(row.error_message),
            h(
              "td",
              {},
              h(
                "button",
                { type: "button", class: "secondary", "aria-label": `View delivery ${row.id} of ${row.event_id}`, onclick: guard(() => openDelivery(hook, row.id)) },
                "View",
              ),
            ),
          ),
        ),
        "No deliveries on this page.",
      );
      const returned = out.pagination.returned;
      $("#deliveries-page").textContent = returned
        ? `Showing ${offset + 1}–${offset + returned} of ${number(log.total)}.`
        : "";
      $("#deliveries-prev").disabled = offset === 0;
      $("#deliveries-next").disabled = offset + returned >= log.total;
    };

    // One delivery: the payload sent and the receiver's reply; owners and admins resend.
    const detail = { endpoint: null, id: null };
    const openDelivery = async (hook, id) => {
      const d = (await api("GET", `/api/auth/me/webhooks/${hook.id}/deliveries/${id}`)).data;
      detail.endpoint = hook;
      detail.id = id;
      const panel = $("#delivery-detail");
      panel.dataset.deliveryId = id;
      $("#delivery-h").textContent = `Delivery of ${d.event_type} (${d.event_id})`;
      facts($("#delivery-facts"), [
        ["Sent to", d.url],
        ["Event", `${d.event_type} · ${d.event_id}`],
        ["How", d.trigger === "resend" ? `resend of delivery ${d.resend_of}` : d.trigger === "manual" ? "test send" : "scheduled"],
        ["Outcome", d.status + (d.error_message ? ` (${d.error_message})` : "")],
        ["Created", when(d.created_at)],
        ["Sent", when(d.sent_at)],
        ["Duration", d.duration_ms === null ? "—" : `${d.duration_ms} ms`],
      ]);
      let pretty = d.payload;
      try {
        pretty = JSON.stringify(JSON.parse(d.payload), null, 2);
      } catch (err) {
        pretty = d.payload;
      }
      $("#delivery-payload").textContent = pretty;
      $("#delivery-response-status").textContent =
        d.http_status === null ? "No HTTP answer (the request did not complete)." : `HTTP ${d.http_status}`;
      $("#delivery-response").textContent = d.response_excerpt || "(empty body)";
      $("#resend-result").textContent = "";
      $("#resend-result").className = "result";
      $("#resend-delivery").disabled = hook.status !== "active";
      panel.hidden = false;
      panel.focus();
    };

    $("#close-delivery").addEventListener("click", () => {
      $("#delivery-detail").hidden = true;
    });

    $("#resend-delivery").addEventListener(
      "click",
      guard(async () => {
        clearMessages();
        const hook = detail.endpoint;
        const result = $("#resend-result");
        result.className = "result";
        result.textContent = `Resending to ${hook.url}…`;
        const out = (await api("POST", `/api/auth/me/webhooks/${hook.id}/deliveries/${detail.id}/resend`)).data;
        await load();
        await openLog(hook, 0);
        await openDelivery(hook, out.id); // the view moves to the new delivery
        const d = out.delivery;
        result.className = `result ${d.status === "delivered" ? "ok" : "failed"}`;
        result.textContent =
          `Resent ${out.event_id} to ${hook.url} as delivery ${out.id}: ${d.status}` +
          (d.http_status ? `, HTTP ${d.http_status}` : "") +
          (d.error ? ` (${d.error})` : "") +
          ".";
      }),
    );

    $("#deliveries-prev").addEventListener("click", guard(() => openLog(log.endpoint, Math.max(0, log.offset - PAGE))));
    $("#deliveries-next").addEventListener("click", guard(() => openLog(log.endpoint, log.offset + PAGE)));

    const enable = async (hook) => {
      clearMessages();
      await api("POST", `/api/auth/me/webhooks/${hook.id}/enable`);
      await load();
      say(`${hook.url} is active again; its failure count was reset.`);
    };

    const revoke = async (hook) => {
      if (!(await ask("revoke", hook.url))) return;
      clearMessages();
      await api("DELETE", `/api/auth/me/webhooks/${hook.id}`);
      await load();
      say(`${hook.url} revoked.`);
    };

    // What data.updated sends the new endpoint: the lists given (none: every change).
    const dataFilters = () => {
      const ticked = (name) => [...document.querySelectorAll(`input[name="${name}"]:checked`)].map((b) => b.value);
      const codes = $("#hook-districts").value.split(/[\s,]+/).filter(Boolean);
      const filters = {};
      if (codes.length) filters.sigungu_codes = codes;
      const ptypes = ticked("filter-property");
      if (ptypes.length) filters.property_types = ptypes;
      const ttypes = ticked("filter-transaction");
      if (ttypes.length) filters.transaction_types = ttypes;
      return filters;
    };
    const filterText = (filters) => {
      const parts = ["sigungu_codes", "property_types", "transaction_types"]
        .filter((key) => (filters || {})[key])
        .map((key) => filters[key].join(", "));
      return parts.length ? ` (data.updated: ${parts.join("; ")})` : "";
    };

    const allBox = $("#event-all");
    const typeBoxes = [...document.querySelectorAll('input[name="events"]')].filter((b) => b !== allBox);
    allBox.addEventListener("change", () => {
      if (allBox.checked) typeBoxes.forEach((b) => (b.checked = false));
    });
    typeBoxes.forEach((b) => b.addEventListener("change", () => b.checked && (allBox.checked = false)));

    onSubmit($("#hook-form"), async (event) => {
      clearMessages();
      const events = [...document.querySelectorAll('input[name="events"]:checked')].map((b) => b.value);
      if (!events.length) throw new ApiError("Choose at least one event, or all events.", "NO_EVENTS");
      const body = { url: $("#hook-url").value.trim(), events };
      const description = $("#hook-description").value.trim();
      if (description) body.description = description;
      const filters = dataFilters();
      if (Object.keys(filters).length) body.filters = filters;
      const row = (await api("POST", "/api/auth/me/webhooks", body)).data;
      event.target.reset();
      await load();
      showSecret(
        `Signing secret of ${row.url}`,
        "Signing secret",
        row.secret_plaintext,
        "svc keeps the secret to sign every delivery, but never shows it again; check signatures with it (docs: webhooks).",
      );
    });
    await load();
  }

  // ---- team ----------------------------------------------------------------------------------

  // The link an inviter hands over (svc sends no email): the team page of this site,
  // which the invitee reaches after signing in with the invited address.
  const inviteLink = (id) => `${window.location.origin}${BASE}/dashboard/team?invite=${encodeURIComponent(id)}`;

  function showInviteLink(member) {
    const panel = $("#invite-link-panel");
    $("#invite-link-note").textContent =
      `svc sends no email: hand this link to ${member.email}. They sign in with that address and accept the invitation.`;
    $("#invite-link").value = inviteLink(member.id);
    $("#invite-copy-status").textContent = "";
    panel.hidden = false;
    panel.focus();
  }

  async function teamPage() {
    const wanted = new URLSearchParams(window.location.search).get("invite");
    copyOnClick("#copy-invite-link", "#invite-link", "#invite-copy-status");
    const load = async () => {
      await loadRole(); // accepting an invitation may change the account and the role
      const team = await api("GET", "/api/auth/me/team");
      const taken = team.members.filter((m) => m.status === "active" || m.status === "pending").length;
      $("#seats").textContent = `${taken} of ${team.seat_limit} seats taken (plan ${team.plan}); pending invitations hold a seat.`;
      fillTable(
        $("#members-table"),
        team.members.map((m) =>
          h(
            "tr",
            { "data-member-id": m.id, "data-status": m.status },
            cell(m.email),
            cell(m.role),
            cell(m.status),
            cell(when(m.invited_at)),
            cell(when(m.joined_at)),
            actionsCell(
              canManage() &&
                m.status === "pending" &&
                h("button", { type: "button", class: "secondary", "aria-label": `Show the invitation link of ${m.email}`, onclick: () => showInviteLink(m) }, "Show link"),
              canManage() &&
                m.role !== "owner" &&
                m.status !== "removed" &&
                h("button", { type: "button", class: "danger", "aria-label": `Remove ${m.email}`, onclick: guard(() => remove(m)) }, "Remove"),
            ),
          ),
        ),
        "No members.",
      );
      const invites = (await api("GET", "/api/auth/me/invites")).invites;
      fillTable(
        $("#invites-table"),
        invites.map((inv) => {
          const account = inv.account_name;
          return h(
            "tr",
            { "data-invite-id": inv.id, class: inv.id === wanted ? "wanted" : undefined },
            cell(account),
            cell(inv.role),
            cell(when(inv.invited_at)),
            h("td", {}, h("button", { type: "button", "aria-label": `Accept the invitation to ${account}`, onclick: guard(() => accept(inv, account)) }, "Accept")),
          );
        }),
        "No invitations for you.",
      );
    };

    const remove = async (m) => {
      if (!(await ask("remove", m.email))) return;
      clearMessages();
      await api("DELETE", `/api/auth/me/team/${m.id}`);
      await load();
      say(`${m.email} removed.`);
    };

    const accept = async (inv, account) => {
      clearMessages();
      await api("POST", `/api/auth/me/invites/${inv.id}/accept`);
      // Accepting switches to the inviting account: the page reloads with it in the header
      // and says so (the notice is carried over the reload in sessionStorage).
      sessionStorage.setItem("svc-notice", `You joined ${account} as ${inv.role}; it is now your current account.`);
      window.location.assign(`${BASE}/dashboard/team`);
    };

    onSubmit($("#invite-form"), async (event) => {
      clearMessages();
      const row = (
        await api("POST", "/api/auth/me/team", { email: $("#invite-email").value.trim(), role: $("#invite-role").value })
      ).data;
      event.target.reset();
      await load();
      say(`${row.email} is invited as ${row.role}; no email is sent: hand over the link below. It expires ${when(row.expires_at)}.`);
      showInviteLink(row);
    });
    await load();
    const carried = sessionStorage.getItem("svc-notice");
    if (carried) {
      sessionStorage.removeItem("svc-notice");
      say(carried);
    } else if (wanted) {
      const row = document.querySelector(`#invites-table tr[data-invite-id="${CSS.escape(wanted)}"]`);
      if (row) {
        say(`You were invited to ${row.cells[0].textContent} as ${row.cells[1].textContent}: accept the invitation below to join it.`);
        row.scrollIntoView({ block: "center" });
        row.querySelector("button").focus();
      } else {
        throw new ApiError(
          `There is no pending invitation of this link for ${$("#whoami").textContent}.`,
          "INVITE_NOT_FOUND",
          "Sign in with the address that was invited; an invitation expires after 7 days and can be accepted once.",
        );
      }
    }
  }

  // ---- explorer ------------------------------------------------------------------------------

  const MAX_PERIODS = 12;
  const RE = "/api/v1/real-estate";

  // The smallest step of 1, 2, 2.5 or 5 times a power of ten (any power, fractions too)
  // that is at least ``v`` (> 0).
  function niceStep(v) {
    let power = 10 ** Math.floor(Math.log10(v));
    for (;;) {
      for (const f of [1, 2, 2.5, 5]) {
        const step = Number((f * power).toPrecision(12));
        if (step >= v) return step;
      }
      power *= 10;
    }
  }

  // Round ticks covering [lo, hi]: at most ``most`` intervals of one nice step, starting
  // and ending on multiples of it (never below zero for values that are not).
  function niceTicks(lo, hi, most = 5) {
    if (!(hi > lo)) {
      const around = Math.abs(hi) || 1;
      return niceTicks(Math.max(0, lo - around * 0.1), hi + around * 0.1, most);
    }
    let step = niceStep((hi - lo) / most);
    for (;;) {
      const first = Math.floor(lo / step) * step;
      const last = Math.ceil(hi / step) * step;
      const count = Math.round((last - first) / step);
      if (count <= most) {
        return Array.from({ length: count + 1 }, (_, i) => Number((first + i * step).toPrecision(12)));
      }
      step = niceStep(step * 1.0001);
    }
  }
  window.svcCharts = { niceStep, niceTicks }; // for the browser tests

  // What the chart shows: SPEC's price quartiles (the deposit for leases), the converted
  // deposit of monthly leases, or per-area quartiles named as the API names them.
  function measureOf(transaction, measure) {
    const base = transaction === "monthly_lease" ? "converted_deposit" : transaction === "chartered_lease" ? "deposit" : "price";
    const what = {
      price: "price",
      deposit: "deposit",
      converted_deposit: "converted deposit (deposit + monthly rent × 12 ÷ statutory rate)",
    }[base];
    if (measure === "total") {
      const stem = base === "deposit" ? "price" : base; // SPEC's *_price is a lease's deposit
      return { keys: [`p25_${stem}`, `median_${stem}`, `p75_${stem}`], unit: "million KRW", what, areaUnit: null };
    }
    const area = measure === "pyeong" ? "pyeong" : "m²";
    const suffix = measure === "pyeong" ? "per_pyeong" : "per_m2";
    return {
      keys: [`p25_${base}_${suffix}`, `median_${base}_${suffix}`, `p75_${base}_${suffix}`],
      unit: `million KRW per ${area}`,
      what: `${what} per ${area}`,
      areaUnit: measure === "pyeong" ? "pyeong" : "m2",
    };
  }

  // A row's standing: incomplete (months missing), provisional (deals still arriving).
  function statusOf(r) {
    if (r.complete === false) {
      const loaded = r.months_expected ? `: ${r.months_loaded} of ${r.months_expected} months loaded` : "";
      return { key: "incomplete", text: `incomplete${loaded}` };
    }
    if (r.provisional) return { key: "provisional", text: "provisional: deals may still be reported" };
    return { key: "", text: "complete" };
  }

  // Every period from ``first`` to ``last`` (both YYYY-MM, or both YYYY-Qn), in order:
  // the axis of a series, whether or not a period has data.
  function periodRange(first, last) {
    const quarter = first.includes("-Q");
    const parse = (p) => (quarter ? [Number(p.slice(0, 4)), Number(p.slice(6))] : [Number(p.slice(0, 4)), Number(p.slice(5, 7))]);
    const per = quarter ? 4 : 12;
    const [fy, fn] = parse(first);
    const [ly, ln] = parse(last);
    const out = [];
    for (let i = fy * per + fn - 1; i <= ly * per + ln - 1 && out.length < 600; i += 1) {
      const year = Math.floor(i / per);
      const n = (i % per) + 1;
      out.push(quarter ? `${year}-Q${n}` : `${year}-${String(n).padStart(2, "0")}`);
    }
    return out;
  }
  window.svcCharts.periodRange = periodRange;

  // ``axis``: every chosen period, in order; ``rows``: those with a point; ``unloaded``:
  // the periods never loaded (drawn as gaps named "not loaded"; other periods without a
  // point are gaps named "no data"). The band and the median line never join two points
  // across a gap.
  function drawChart(rows, heading, measure, axis = rows.map((r) => r.period), unloaded = []) {
    const [lowKey, midKey, highKey] = measure.keys;
    // as wide as the page gives it, drawn at its own size (labels are not scaled up or down)
    const W = Math.max(560, Math.round($("#chart").clientWidth || 760));
    const H = 380;
    const m = { l: 80, r: 44, t: 56, b: 72 };
    const ticks = niceTicks(Math.min(...rows.map((r) => r[lowKey])), Math.max(...rows.map((r) => r[highKey])));
    const y0 = ticks[0];
    const y1 = ticks[ticks.length - 1];
    const slot = new Map(axis.map((p, i) => [p, i]));
    const step = axis.length > 1 ? (W - m.l - m.r) / (axis.length - 1) : 0;
    const x = (i) => (axis.length > 1 ? m.l + slot.get(rows[i].period) * step : (W + m.l - m.r) / 2);
    const xAt = (k) => (axis.length > 1 ? m.l + k * step : (W + m.l - m.r) / 2);
    const y = (v) => m.t + (H - m.t - m.b) * (1 - (v - y0) / (y1 - y0));
    const millions = (v) => `${(v / 1e6).toLocaleString("en-US", { maximumFractionDigits: 3 })}`;

    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-title chart-desc" });
    svg.append(
      s("title", { id: "chart-title" }, heading),
      s(
        "desc",
        { id: "chart-desc" },
        `Median ${measure.what} per period with the 25th to 75th percentile band, in ${measure.unit}, ${rows.length} period(s); hollow points are incomplete or provisional periods, ringed points hold bulk contracts. The table below lists every point.`,
      ),
    );
    for (const v of ticks) {
      svg.append(
        s("line", { class: "chart-grid", x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }),
        s("text", { class: "chart-label chart-tick", x: m.l - 8, y: y(v) + 4, "text-anchor": "end", "data-value": v }, millions(v)),
      );
    }
    svg.append(
      s("line", { class: "chart-axis", x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }),
      s("line", { class: "chart-axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }),
      s("text", { class: "chart-label chart-unit", x: 12, y: m.t - 12 }, `${measure.what}, ${measure.unit}`),
    );
    // Periods without a point: a column on the axis (hatched when never loaded), named.
    svg.append(
      s(
        "defs",
        {},
        s(
          "pattern",
          { id: "chart-hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" },
          s("rect", { width: 8, height: 8, fill: "#f3f4f6" }),
          s("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#9ca3af", "stroke-width": 2 }),
        ),
      ),
    );
    const never = new Set(unloaded);
    const gapWidth = axis.length > 1 ? Math.min(step * 0.8, 60) : 72;
    axis.forEach((p, k) => {
      if (rows.some((r) => r.period === p)) return;
      const kind = never.has(p) ? "not loaded" : "no data";
      svg.append(
        s(
          "rect",
          { class: `chart-gap${never.has(p) ? " chart-unloaded" : ""}`, x: xAt(k) - gapWidth / 2, y: m.t, width: gapWidth, height: H - m.t - m.b, "data-period": p },
          s("title", {}, `${p}: ${kind}${never.has(p) ? " (never loaded: svc cannot tell whether it had deals)" : " (loaded, but no cohort with enough contracts)"}`),
        ),
        s("text", { class: "chart-label", x: xAt(k), y: H - m.b + 18, "text-anchor": "middle" }, p),
        s("text", { class: "chart-label chart-status chart-gap-label", x: xAt(k), y: H - m.b + 34, "text-anchor": "middle" }, kind),
      );
    });
    // Runs of consecutive axis periods with points: each has its own band and line. A run
    // of one period has no width to span: its band and median are drawn as a box and a
    // bar around the point, so the p25–p75 range still shows.
    const runs = [];
    rows.forEach((r, i) => {
      const last = runs[runs.length - 1];
      if (last && slot.get(r.period) === slot.get(rows[last[last.length - 1]].period) + 1) last.push(i);
      else runs.push([i]);
    });
    const single = axis.length > 1 ? Math.min(36, step * 0.35) : 36;
    for (const run of runs) {
      const half = run.length > 1 ? 0 : single;
      const edge = (i, key) => (half ? [`${x(i) - half},${y(rows[i][key])}`, `${x(i) + half},${y(rows[i][key])}`] : [`${x(i)},${y(rows[i][key])}`]);
      const upper = run.flatMap((i) => edge(i, highKey));
      const lower = run.flatMap((i) => edge(i, lowKey)).reverse();
      svg.append(s("polygon", { class: "chart-band", points: [...upper, ...lower].join(" ") }));
      svg.append(s("polyline", { class: "chart-median", points: run.flatMap((i) => edge(i, midKey)).join(" ") }));
    }
    rows.forEach((r, i) => {
      const status = statusOf(r);
      const bulk = r.bulk_contracts || 0;
      const contracts = r.contract_count ?? r.sample_count;
      if (bulk) svg.append(s("circle", { class: "chart-bulk", cx: x(i), cy: y(r[midKey]), r: 9, "data-period": r.period }));
      svg.append(
        s(
          "circle",
          { class: `chart-point${status.key ? ` chart-${status.key}` : ""}`, cx: x(i), cy: y(r[midKey]), r: 5, "data-period": r.period },
          s(
            "title",
            {},
            `${r.period}: median ${krw(r[midKey])} (p25 ${krw(r[lowKey])}, p75 ${krw(r[highKey])}), ${r.sample_count} samples in ${contracts} contracts${bulk ? ` (${bulk} bulk)` : ""}, ${r.confidence} confidence, ${status.text}`,
          ),
        ),
        s("text", { class: "chart-label", x: x(i), y: H - m.b + 18, "text-anchor": "middle" }, r.period),
      );
      if (status.key) {
        svg.append(s("text", { class: "chart-label chart-status", x: x(i), y: H - m.b + 34, "text-anchor": "middle" }, status.key));
      }
    });
    const lx = W - m.r - 420;
    if (axis.length > rows.length) {
      svg.append(
        s("rect", { class: "chart-gap chart-unloaded", x: lx - 110, y: 10, width: 18, height: 12 }),
        s("text", { class: "chart-label", x: lx - 86, y: 20 }, "no point"),
      );
    }
    svg.append(
      s("rect", { class: "chart-legend-band", x: lx, y: 10, width: 18, height: 12 }),
      s("text", { class: "chart-label", x: lx + 24, y: 20 }, "p25–p75"),
      s("circle", { class: "chart-legend-median", cx: lx + 100, cy: 16, r: 5 }),
      s("text", { class: "chart-label", x: lx + 110, y: 20 }, "median"),
      s("circle", { class: "chart-legend-hollow", cx: lx + 170, cy: 16, r: 5 }),
      s("text", { class: "chart-label", x: lx + 180, y: 20 }, "incomplete / provisional"),
      s("circle", { class: "chart-legend-bulk", cx: lx + 340, cy: 16, r: 8 }),
      s("text", { class: "chart-label", x: lx + 352, y: 20 }, "bulk contracts"),
    );
    $("#chart").replaceChildren(svg);
  }

  // A change of a median as the API states it: "+12.01 % on 2025-05 (9 vs 7 contracts,
  // not significant, 95% -9.4 % to 38.6 %)", or why it is unknown.
  const CHANGE_REASONS = {
    not_loaded: "not loaded",
    incomplete: "a period is incomplete",
    too_few_transactions: "too few contracts",
    no_value: "no such median",
  };
  function changeText(c) {
    if (!c) return "—";
    if (c.change_pct == null) return `— on ${c.base_period || "—"}: ${CHANGE_REASONS[c.reason] || c.reason}`;
    const pct = (v) => `${v > 0 ? "+" : ""}${v} %`;
    const interval = c.interval_low_pct == null ? "no interval: too few contracts" : `95% ${pct(c.interval_low_pct)} to ${pct(c.interval_high_pct)}`;
    return `${pct(c.change_pct)} on ${c.base_period} (${c.contract_count} vs ${c.base_contract_count} contracts, ${c.significant ? "significant" : "not significant"}, ${interval})`;
  }
  function changeCell(c) {
    const td = cell(changeText(c));
    td.dataset.significant = c && c.significant ? "true" : "false";
    if (c && c.significant) td.classList.add("significant");
    return td;
  }
  // The change fields of a measure: of the whole median, or of the median per area.
  function changeKeys(measure) {
    const suffix = measure.areaUnit ? `_per_${measure.areaUnit}` : "";
    return [`change_vs_previous${suffix}`, `change_vs_year_ago${suffix}`];
  }

  // Ranked districts as horizontal bars with their 95% interval. One district far above
  // the rest would squeeze every other bar to nothing: the axis stops at three times the
  // median value (when something passes it), and a bar or band beyond it is cut with a
  // break mark and its value written out.
  function drawCompare(rows, heading, unitLabel, money) {
    const W = Math.max(560, Math.round($("#compare-chart").clientWidth || 760));
    const barH = 22;
    const m = { l: 170, r: 150, t: 48, b: 40 };
    const H = m.t + m.b + rows.length * (barH + 8);
    const values = rows.map((r) => r.sort_value);
    const tops = rows.map((r) => Math.max(r.sort_value, r.interval_high ?? 0));
    const sorted = values.slice().sort((a, b) => a - b);
    const typical = sorted[Math.floor(sorted.length / 2)];
    const cap = rows.length >= 3 && Math.max(...tops) > 3 * typical ? 3 * typical : Math.max(...tops);
    const ticks = niceTicks(0, cap);
    const end = ticks[ticks.length - 1];
    const x = (v) => m.l + (W - m.l - m.r) * (Math.min(v, end) / end);
    const shown = (v) => (money ? `${(v / 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 })}` : number(v));
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "compare-title compare-desc" });
    svg.append(
      s("title", { id: "compare-title" }, heading),
      s("desc", { id: "compare-desc" }, `${rows.length} districts ranked, each bar the value with its 95% interval as a line; the table below lists every district, also those without figures.`),
    );
    for (const v of ticks) {
      svg.append(
        s("line", { class: "chart-grid", x1: x(v), x2: x(v), y1: m.t - 6, y2: H - m.b }),
        s("text", { class: "chart-label chart-tick", x: x(v), y: H - m.b + 16, "text-anchor": "middle" }, shown(v)),
      );
    }
    const lx = W - m.r - 330;
    svg.append(
      s("text", { class: "chart-label chart-unit", x: 12, y: 20 }, unitLabel),
      s("rect", { class: "compare-bar", x: lx, y: 10, width: 18, height: 12 }),
      s("text", { class: "chart-label", x: lx + 24, y: 20 }, "value"),
      s("line", { class: "compare-band", x1: lx + 70, x2: lx + 100, y1: 16, y2: 16 }),
      s("text", { class: "chart-label", x: lx + 106, y: 20 }, "95% interval"),
      s("rect", { class: "compare-bar compare-incomplete", x: lx + 196, y: 10, width: 18, height: 12 }),
      s("text", { class: "chart-label", x: lx + 220, y: 20 }, "incomplete / provisional"),
    );
    rows.forEach((r, i) => {
      const top = m.t + i * (barH + 8);
      const cut = r.sort_value > end;
      const status = statusOf(r);
      svg.append(
        s("text", { class: "chart-label", x: m.l - 8, y: top + barH / 2 + 4, "text-anchor": "end" }, `${r.rank}. ${r.sigungu}`),
        s(
          "rect",
          { class: `compare-bar${status.key ? ` compare-${status.key}` : ""}`, x: m.l, y: top, width: Math.max(1, x(r.sort_value) - m.l), height: barH, "data-code": r.sigungu_code },
          s("title", {}, `${r.sigungu} (${r.sigungu_code}): ${shown(r.sort_value)}${r.interval_low != null ? `, 95% ${shown(r.interval_low)} to ${shown(r.interval_high)}` : ""}, ${r.contract_count} contracts, ${r.confidence} confidence, ${status.text}`),
        ),
      );
      if (r.interval_low != null) {
        const y = top + barH / 2;
        svg.append(
          s("line", { class: "compare-band", x1: x(r.interval_low), x2: x(r.interval_high), y1: y, y2: y, "data-code": r.sigungu_code }),
          s("line", { class: "compare-band", x1: x(r.interval_low), x2: x(r.interval_low), y1: y - 6, y2: y + 6 }),
          s("line", { class: "compare-band", x1: x(r.interval_high), x2: x(r.interval_high), y1: y - 6, y2: y + 6 }),
        );
      }
      if (cut || (r.interval_high ?? 0) > end) {
        const bx = x(end) - 10;
        svg.append(s("path", { class: "compare-break", d: `M${bx - 4},${top - 2} l8,${barH + 4} M${bx + 2},${top - 2} l8,${barH + 4}`, "data-code": r.sigungu_code }));
      }
      svg.append(s("text", { class: "chart-label", x: W - m.r + 8, y: top + barH / 2 + 4 }, `${shown(r.sort_value)}${cut ? " (off the axis)" : ""}`));
    });
    $("#compare-chart").replaceChildren(svg);
    return cap < Math.max(...tops);
  }

  async function explorerPage() {
    const district = $("#x-district");
    const property = $("#x-property");
    const transaction = $("#x-transaction");
    const building = $("#x-building");
    const lease = $("#x-lease");
    const industrialUse = $("#x-industrial-use");
    const landCategory = $("#x-land-category");
    const zoning = $("#x-zoning");
    const measureSelect = $("#x-measure");
    const granularity = $("#x-granularity");
    const periods = $("#x-periods");
    let coverage = [];
    let dims = {};

    const updateLease = () => {
      const isLease = transaction.value !== "sale";
      lease.disabled = !isLease;
      if (!isLease) lease.value = "";
    };

    // A filter's row shows only for the property types that have its values (offered as
    // /dimensions lists them with data); a hidden filter is cleared, never sent.
    const showFilter = (select, shown) => {
      select.closest("p").hidden = !shown;
      if (!shown) select.value = "";
    };
    const offer = (select, items) => {
      const kept = select.value;
      select.replaceChildren(
        h("option", { value: "", text: "all" }),
        ...items.map((i) => h("option", { value: i.value, text: `${i.value} (${number(i.sample_count)})` })),
      );
      select.value = items.some((i) => i.value === kept) ? kept : "";
      showFilter(select, items.length > 0);
    };
    const updateTypeFilters = () => {
      const type = property.value;
      const of = (list) => (list || []).filter((i) => i.property_type === type);
      showFilter(industrialUse, type === "industrial");
      offer(landCategory, of(dims.land_categories));
      offer(zoning, of(dims.zonings));
      showFilter(building, type !== "land"); // a land deal has no building
    };
    const typeFilters = () =>
      [
        ["industrial_use", industrialUse],
        ["land_category", landCategory],
        ["zoning", zoning],
      ].filter(([, select]) => select.value);

    const updatePeriods = () => {
      updateLease();
      updateTypeFilters();
      const row = coverage.find((r) => r.property_type === property.value && r.transaction_type === transaction.value);
      // The whole range from the first to the last period with data: a period between
      // them without data is offered too, and charted as a gap (never silently skipped).
      const withData = new Set(row ? row.periods_with_data : []);
      const list = row ? periodRange(row.earliest_period, row.latest_period) : [];
      const chosen = new Set(list.slice(-MAX_PERIODS));
      periods.replaceChildren(
        ...list.map((p) => h("option", { value: p, selected: chosen.has(p), text: withData.has(p) ? p : `${p} (no data)` })),
      );
      if (!row) {
        say("No data for this property and transaction type in this district; the coverage table lists what exists.");
      }
    };

    const loadCoverage = async () => {
      clearMessages();
      const q = new URLSearchParams({ sigungu_code: district.value, granularity: granularity.value, limit: "500" });
      coverage = (await api("GET", `${RE}/coverage?${q}`)).data;
      fillTable(
        $("#coverage-table"),
        coverage.map((r) =>
          h(
            "tr",
            {},
            cell(r.property_type),
            cell(r.transaction_type),
            cell(r.earliest_period),
            cell(r.latest_period),
            cell(number(r.period_count), "num"),
            cell(number(r.total_samples), "num"),
            cell(r.contract_count == null ? "—" : number(r.contract_count), "num"),
            cell(number(r.samples_per_period_median), "num"),
            cell((r.data_sources || []).join(", ")),
          ),
        ),
        "No transactions in this district.",
      );
      const current = coverage.find((r) => r.property_type === property.value && r.transaction_type === transaction.value);
      if (!current && coverage.length) {
        property.value = coverage[0].property_type;
        transaction.value = coverage[0].transaction_type;
      }
      updatePeriods();
    };

    const show = async () => {
      clearMessages();
      const chosen = [...periods.selectedOptions].map((o) => o.value);
      if (!chosen.length) throw new ApiError("Choose at least one period.", "NO_PERIODS");
      if (chosen.length > MAX_PERIODS) {
        throw new ApiError(`Choose at most ${MAX_PERIODS} periods (${chosen.length} are selected).`, "TOO_MANY_PERIODS");
      }
      const measure = measureOf(transaction.value, measureSelect.value);
      const q = new URLSearchParams({
        sigungu_code: district.value,
        property_type: property.value,
        transaction_type: transaction.value,
        periods: chosen.join(","),
      });
      if (building.value) q.set("building_type", building.value);
      if (lease.value && !lease.disabled) q.set("lease_kind", lease.value);
      for (const [name, select] of typeFilters()) q.set(name, select.value);
      if (measure.areaUnit) q.set("area_unit", measure.areaUnit);
      if (measure.areaUnit && property.value === "land") measure.what += " of land";
      const out = await api("GET", `${RE}/pulse/series?${q}`);
      const all = out.data.slice().sort((a, b) => (a.period < b.period ? -1 : 1));
      const rows = all.filter((r) => measure.keys.every((k) => r[k] != null));
      const name = all.length ? all[0].sigungu : district.selectedOptions[0].textContent;
      const filters = [
        building.value && building.selectedOptions[0].textContent,
        !lease.disabled && lease.value && lease.selectedOptions[0].textContent,
        ...typeFilters().map(([, select]) => select.value),
      ]
        .filter(Boolean)
        .join(", ");
      const heading = `${name} · ${property.value} · ${transaction.value}${filters ? ` (${filters})` : ""} · ${measure.what}`;
      const meta = out._meta;
      const axis = chosen.slice().sort();
      const unloaded = meta.unloaded_periods || [];
      if (rows.length) {
        drawChart(rows, heading, measure, axis, unloaded);
      } else {
        $("#chart").replaceChildren();
      }
      const missing = (meta.missing_periods || []).filter((p) => !unloaded.includes(p));
      const unmeasured = all.filter((r) => !rows.includes(r)).map((r) => r.period);
      const demo = (meta.known_limitations || []).some((t) => t.startsWith("Synthetic demo data"));
      $("#chart-note").textContent =
        (demo ? "Synthetic demo data: not real transactions. " : "") +
        `${heading}: ${rows.length} period(s); confidence of the series ${meta.confidence || "—"}` +
        (unloaded.length ? `; not loaded (no figure, not "no deals"; shown as gaps): ${unloaded.join(", ")}` : "") +
        (missing.length ? `; loaded but too few contracts: ${missing.join(", ")}` : "") +
        (unmeasured.length ? `; no ${measure.what} for ${unmeasured.join(", ")} (no area reported)` : "") +
        ((meta.incomplete_periods || []).length ? `; months not completely loaded: ${meta.incomplete_periods.join(", ")}` : "") +
        ((meta.rejected_rows || []).length
          ? `; rejected at load as malformed (in no figure): ${meta.rejected_rows.map((r) => `${r.count} in ${r.month}`).join(", ")}`
          : "") +
        ".";
      const limits = [...(meta.known_limitations || []), ...(meta.coverage_note ? [meta.coverage_note] : [])];
      $("#limits-list").replaceChildren(...limits.map((t) => h("li", { text: t })));
      $("#chart-limits").hidden = !limits.length;
      const gaps = axis
        .filter((p) => !all.some((r) => r.period === p))
        .map((p) => {
          const never = unloaded.includes(p);
          return h(
            "tr",
            { "data-period": p, "data-status": never ? "not_loaded" : "no_data", "data-bulk": "0" },
            cell(p),
            cell("—", "num"),
            cell("—", "num"),
            cell("—", "num"),
            cell("—", "num"),
            cell("—", "num"),
            cell("—"),
            cell(never ? "not loaded: svc cannot tell whether it had deals" : "loaded, too few contracts"),
            cell(""),
            cell("—"),
            cell("—"),
          );
        });
      fillTable(
        $("#points-table"),
        [...all.map((r) => {
          const status = statusOf(r);
          const contracts = r.contract_count ?? r.sample_count;
          const bulk = r.bulk_contracts || 0;
          return h(
            "tr",
            { "data-period": r.period, "data-status": status.key || "complete", "data-bulk": String(bulk) },
            cell(r.period),
            cell(number(r.sample_count), "num"),
            cell(`${number(contracts)}${bulk ? ` (${number(bulk)} bulk)` : ""}`, "num"),
            cell(r[measure.keys[0]] == null ? "—" : krw(r[measure.keys[0]]), "num"),
            cell(r[measure.keys[1]] == null ? "—" : krw(r[measure.keys[1]]), "num"),
            cell(r[measure.keys[2]] == null ? "—" : krw(r[measure.keys[2]]), "num"),
            cell(r.confidence),
            cell(status.text),
            cell(Object.entries(r.source_mix || {}).map(([k, v]) => `${k}: ${v}`).join(", ")),
            ...changeKeys(measure).map((k) => changeCell(r[k])),
          );
        }), ...gaps].sort((a, b) => (a.dataset.period < b.dataset.period ? -1 : 1)),
        "No points.",
      );
      const link = $("#csv-link");
      q.set("format", "csv");
      link.href = `${BASE}${RE}/pulse/series?${q}`;
      link.setAttribute("download", `svc-series-${district.value}-${property.value}-${transaction.value}.csv`);
      link.hidden = false;
    };

    const compare = async () => {
      clearMessages();
      const q = new URLSearchParams({
        property_type: property.value,
        transaction_type: transaction.value,
        period: $("#c-period").value,
        sort: $("#c-sort").value,
      });
      const sido = $("#c-sido").value;
      if (sido) q.set("sido", sido);
      else {
        const codes = [...$("#c-districts").selectedOptions].map((o) => o.value);
        if (!codes.length) throw new ApiError("Choose a province or at least one district.", "NO_DISTRICTS");
        q.set("sigungu_codes", codes.slice(0, 50).join(","));
      }
      if (building.value) q.set("building_type", building.value);
      if (lease.value && !lease.disabled) q.set("lease_kind", lease.value);
      const out = await api("GET", `${RE}/compare?${q}`);
      const rows = out.data;
      const ranked = rows.filter((r) => r.rank != null);
      const sort = $("#c-sort").value;
      const money = sort !== "contract_count";
      const what = $("#c-sort").selectedOptions[0].textContent;
      const heading = `${property.value} · ${transaction.value} · ${out._meta.query.period} · ranked by ${what}`;
      let cut = false;
      if (ranked.length) cut = drawCompare(ranked, heading, money ? `${what}, million KRW` : what, money);
      else $("#compare-chart").replaceChildren();
      const reasons = Object.entries(out._meta.without_figures || {}).map(([k, v]) => `${v} ${k.replace(/_/g, " ")}`);
      $("#compare-note").textContent =
        `${heading}: ${ranked.length} of ${rows.length} districts ranked` +
        (reasons.length ? `; without figures (listed, not dropped): ${reasons.join(", ")}` : "") +
        (cut ? "; the axis is cut at three times the median so that one district does not flatten the others (cut bars are marked)" : "") +
        ".";
      const [prevKey, yearKey] = sort === "median_per_m2" ? ["change_vs_previous_per_m2", "change_vs_year_ago_per_m2"] : ["change_vs_previous", "change_vs_year_ago"];
      fillTable(
        $("#compare-table"),
        rows.map((r) => {
          const status = r.reason ? { key: r.reason, text: r.reason.replace(/_/g, " ") } : statusOf(r);
          return h(
            "tr",
            { "data-code": r.sigungu_code, "data-status": status.key || "complete" },
            cell(r.rank == null ? "—" : String(r.rank), "num"),
            cell(`${r.sigungu} (${r.sigungu_code})`),
            cell(r.sort_value == null ? "—" : money ? krw(r.sort_value) : number(r.sort_value), "num"),
            cell(r.interval_low == null ? "—" : `${krw(r.interval_low)} – ${krw(r.interval_high)}`, "num"),
            cell(r.contract_count == null ? "—" : number(r.contract_count), "num"),
            cell(r.confidence || "—"),
            cell(status.text),
            changeCell(r[prevKey]),
            changeCell(r[yearKey]),
          );
        }),
        "No districts.",
      );
      const link = $("#compare-csv");
      link.href = `${BASE}${RE}/compare.csv?${q}`;
      link.setAttribute("download", `svc-compare-${property.value}-${transaction.value}.csv`);
      link.hidden = false;
    };

    dims = (await api("GET", `${RE}/dimensions`)).data;
    district.replaceChildren(
      ...dims.sigungus.map((d) => h("option", { value: d.code, text: `${d.value} (${d.code})` })),
    );
    $("#c-districts").replaceChildren(
      ...dims.sigungus.slice(0, 50).map((d) => h("option", { value: d.code, selected: true, text: `${d.value} (${d.code})` })),
    );
    onSubmit($("#compare-form"), async () => {
      await compare();
    });
    if (!dims.sigungus.length) {
      say("No districts have transactions yet: load data first (svc demo-data or svc ingest).");
      return;
    }
    district.addEventListener("change", guard(loadCoverage));
    granularity.addEventListener("change", guard(loadCoverage));
    property.addEventListener("change", updatePeriods);
    transaction.addEventListener("change", updatePeriods);
    onSubmit($("#explorer-form"), async () => {
      await show();
    });
    await loadCoverage();
    if (periods.selectedOptions.length) await show();
  }

  const PAGES = {
    signin: signinPage,
    overview: overviewPage,
    keys: keysPage,
    requests: requestsPage,
    webhooks: webhooksPage,
    team: teamPage,
    explorer: explorerPage,
  };
  const run = PAGES[page];
  if (run) guard(run)().finally(() => document.body.setAttribute("data-ready", "true"));
})();
