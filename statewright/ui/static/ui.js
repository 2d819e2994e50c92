// statewright ui: signs in with the one-time link's fragment, loads the page's content from
// /api with the session key (kept in this tab's sessionStorage), and follows the store live
// with a long poll. The server renders and escapes all HTML; this script only swaps it in.
(() => {
  "use strict";
  const KEY = "statewright-key";
  const main = document.getElementById("main");
  const live = document.getElementById("live");
  const flash = document.getElementById("flash");
  let key = sessionStorage.getItem(KEY);
  let mark = -1;
  let deferred = false;

  function say(text, kind) {
    flash.textContent = text || "";
    flash.className = text ? kind || "info" : "";
  }

  function showSignIn() {
    main.replaceChildren(document.getElementById("signin").content.cloneNode(true));
    live.textContent = "signed out";
  }

  async function signIn() {
    const m = /^#login=([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (!m) return;
    history.replaceState(null, "", location.pathname + location.search);
    const r = await fetch("/api/session", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({token: m[1]}),
    });
    const body = await r.json().catch(() => ({}));
    if (r.ok && body.key) {
      key = body.key;
      sessionStorage.setItem(KEY, key);
    } else {
      say((body.error && body.error.message) || "sign-in refused", "error");
    }
  }

  function api(path, options) {
    const o = options || {};
    o.headers = Object.assign({"X-Statewright-Key": key}, o.headers || {});
    return fetch(path, o);
  }

  function viewPath() {
    return "/api" + (location.pathname === "/" ? "/runs" : location.pathname) + location.search;
  }

  function editing() {
    const el = document.activeElement;
    return el && main.contains(el) && el.tagName === "INPUT";
  }

  async function load() {
    if (!key) { showSignIn(); return false; }
    if (editing()) { deferred = true; return true; }
    const r = await api(viewPath());
    if (r.status === 401) {
      sessionStorage.removeItem(KEY);
      key = null;
      showSignIn();
      return false;
    }
    if (!r.ok) {
      const body = await r.json().catch(() => ({}));
      // never a dead end (an unknown run id, a run gone): a way back to the list of runs
      const back = document.createElement("p");
      const link = document.createElement("a");
      link.href = "/";
      link.textContent = "← all runs";
      back.className = "back";
      back.append(link);
      main.replaceChildren(back);
      say((body.error && body.error.message) || ("error " + r.status), "error");
      return true;
    }
    main.innerHTML = await r.text();
    mark = Number(r.headers.get("X-Statewright-Mark"));
    live.textContent = "live";
    live.className = "live on";
    document.body.dataset.mark = String(mark);
    return true;
  }

  async function follow() {
    for (;;) {
      try {
        const r = await api("/api/wait?since=" + mark);
        if (r.status === 401) { showSignIn(); return; }
        const body = await r.json();
        live.textContent = "live";
        live.className = "live on";
        if (body.mark !== mark) await load();
      } catch (e) {
        live.textContent = "reconnecting…";
        live.className = "live off";
        await new Promise((ok) => setTimeout(ok, 2000));
      }
    }
  }

  main.addEventListener("focusout", () => {
    setTimeout(() => { if (deferred && !editing()) { deferred = false; load(); } }, 0);
  });

  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form.decide");
    if (!form) return;
    ev.preventDefault();
    const decision = ev.submitter ? ev.submitter.value : "approve";
    const reason = form.elements.reason.value;
    const aid = form.dataset.approval;
    for (const b of form.querySelectorAll("button")) b.disabled = true;
    const r = await api("/api/approvals/" + encodeURIComponent(aid) + "/" + decision, {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({reason: reason}),
    });
    const body = await r.json().catch(() => ({}));
    if (r.ok) {
      say(decision === "approve" ? "Approved: the run is now in " + body.state + "."
                                 : "Rejected: the run stays in " + body.state + ".", "ok");
    } else {
      say("Refused: " + ((body.error && body.error.message) || r.status), "error");
    }
    document.activeElement && document.activeElement.blur();
    deferred = false;
    await load();
  });

  (async () => {
    await signIn();
    if (await load()) follow();
  })();
})();
