// Live updates of the approvals page over Server-Sent Events. The page works
// without this script (plain forms); with it, rows appear and leave as
// requests come and are decided here, in another tab, or elsewhere.
(function () {
  "use strict";
  var body = document.body;
  var base = body.getAttribute("data-base") || "";
  var csrf = body.getAttribute("data-csrf") || "";
  var skew = Number(body.getAttribute("data-now-ms")) - Date.now();
  var pending = document.getElementById("pending");
  var live = document.getElementById("live");

  function say(text) { if (live) { live.textContent = text; } }

  function countdowns() {
    var now = Date.now() + skew;
    document.querySelectorAll(".countdown[data-expires-ms]").forEach(function (el) {
      var left = Math.floor((Number(el.getAttribute("data-expires-ms")) - now) / 1000);
      if (left <= 0) { el.textContent = "(deadline passed)"; el.classList.add("late"); return; }
      var m = Math.floor(left / 60), s = left % 60;
      el.textContent = "(" + (m > 0 ? m + " min " : "") + s + " s left)";
    });
  }
  countdowns();
  setInterval(countdowns, 1000);

  function emptyState() {
    var none = document.getElementById("none");
    if (none && pending) { none.hidden = pending.children.length > 0; }
  }

  function fragment(path, then) {
    fetch(base + path, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(then)
      .catch(function () {});
  }

  function refreshRecent() {
    var recent = document.getElementById("recent");
    if (recent) { fragment("/fragments/recent", function (html) { if (html) { recent.innerHTML = html; } }); }
  }

  function removeRow(id) {
    var row = document.getElementById("request-" + id);
    if (row) { row.remove(); emptyState(); }
  }

  if (pending && window.EventSource) {
    var stream = new EventSource(base + "/api/stream");
    // Rows are added and removed one by one, never redrawn: a reason being
    // typed stays where it is.
    function addRow(view, announce) {
      if (document.getElementById("request-" + view.id)) { return; }
      fragment("/fragments/requests/" + encodeURIComponent(view.id), function (html) {
        if (!html || document.getElementById("request-" + view.id)) { return; }
        pending.insertAdjacentHTML("beforeend", html);
        emptyState(); countdowns();
        if (announce) { say("New request: " + view.tool + " from " + view.agent); }
      });
    }
    stream.addEventListener("snapshot", function (e) {
      var views = JSON.parse(e.data).pending || [];
      var wanted = {};
      views.forEach(function (view) { wanted[view.id] = true; });
      var removed = false;
      Array.prototype.slice.call(pending.children).forEach(function (row) {
        if (!wanted[row.getAttribute("data-id")]) { row.remove(); removed = true; }
      });
      if (removed) { refreshRecent(); }
      views.forEach(function (view) { addRow(view, false); });
      emptyState();
    });
    stream.addEventListener("request", function (e) {
      addRow(JSON.parse(e.data), true);
    });
    stream.addEventListener("decided", function (e) {
      var view = JSON.parse(e.data);
      if (document.getElementById("request-" + view.id)) {
        removeRow(view.id);
        say(view.tool + " was " + view.status + (view.decided_by ? " by " + view.decided_by : ""));
      }
      refreshRecent();
    });
    stream.addEventListener("signed_out", function () {
      stream.close();
      say("Your session ended; reload the page to sign in again.");
    });
  }

  // A request's own page, once it is decided: its state, who decided and
  // when take the place of the form, without a reload.
  function showOutcome(form, view) {
    var status = document.getElementById("status");
    if (status) { status.textContent = view.status; }
    var outcome = document.createElement("p");
    outcome.className = "outcome " + view.status;
    outcome.id = "outcome";
    var text = view.status.charAt(0).toUpperCase() + view.status.slice(1);
    if (view.decided_by) { text += " by " + view.decided_by; }
    if (view.decided_at) { text += " at " + view.decided_at; }
    if (view.reason) { text += " — “" + view.reason + "”"; }
    outcome.textContent = text + ".";
    var holder = form.closest(".requests") || form;
    holder.replaceWith(outcome);
    document.querySelectorAll(".countdown").forEach(function (el) { el.remove(); });
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.classList || !form.classList.contains("decide") || !window.fetch) { return; }
    e.preventDefault();
    // Only an explicit press of Approve or Reject decides: a submit with
    // any other submitter (Enter in the reason field) does nothing.
    var button = e.submitter;
    if (!button || !button.classList ||
        !(button.classList.contains("approve") || button.classList.contains("reject"))) {
      say("Press Approve or Reject to decide.");
      return;
    }
    var decision = button.value;
    if (decision !== "approve" && decision !== "reject") { return; }
    var id = form.getAttribute("data-id");
    var reason = form.querySelector("input[name=reason]").value;
    var digest = form.querySelector("input[name=args_digest]");
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    fetch(base + "/api/requests/" + encodeURIComponent(id) + "/decide", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ decision: decision, reason: reason,
                             args_digest: digest ? digest.value : null })
    }).then(function (r) { return r.json().catch(function () { return {}; }); })
      .then(function (reply) {
        say(reply.message || reply.error || "Something went wrong; reload the page.");
        if (reply.request && reply.request.status !== "pending") {
          if (pending) {
            removeRow(id);
            refreshRecent();
          } else {
            showOutcome(form, reply.request);
          }
        } else {
          // An approval counted towards a quorum: show the progress.
          var quorum = reply.request && reply.request.quorum &&
            document.getElementById("quorum-" + id);
          if (quorum) { quorum.textContent = "Approvals: " + reply.request.quorum; }
          form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
        }
      })
      .catch(function () {
        say("The decision could not be sent; check the connection and try again.");
        form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      });
  });
})();
