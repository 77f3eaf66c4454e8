// VMAFX console: keeps a job list and a running job's page live. Every page works
// without it.
"use strict";
(function () {
  function say(text) {
    var s = document.getElementById("live-status");
    if (s) { s.textContent = text; }
  }
  // The job list: live from the server's event stream of the namespace's jobs (a watch
  // made as the caller); where there is none, or it stops, fetch the rows every 5 s.
  var table = document.getElementById("jobs");
  if (table) {
    var body = table.querySelector("tbody");
    var timer = null;
    var poll = function () {
      fetch(table.dataset.refresh, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          if (r.status === 401) { window.location.reload(); throw new Error("logged out"); }
          if (!r.ok) { throw new Error(r.status + " " + r.statusText); }
          return r.text();
        })
        .then(function (html) {
          body.innerHTML = html; // the server's own escaped rows
          say("Updated at " + new Date().toLocaleTimeString() + "; this list refreshes itself every 5 seconds.");
        })
        .catch(function (e) { say("Could not refresh the list: " + e.message); });
    };
    var startPolling = function (why) {
      if (timer === null && table.dataset.refresh) {
        timer = setInterval(poll, 5000);
        say(why + " This list refreshes itself every 5 seconds.");
      }
    };
    // upsert puts a job's row (the server's own escaped HTML) in place, newest first.
    var upsert = function (d) {
      var rows = body.querySelectorAll("tr[data-job]");
      var old = null;
      for (var i = 0; i < rows.length; i++) { if (rows[i].dataset.job === d.name) { old = rows[i]; } }
      if (d.deleted) { if (old) { old.remove(); } return; }
      var t = document.createElement("tbody");
      t.innerHTML = d.row;
      var row = t.querySelector("tr");
      if (!row) { return; }
      if (old) { old.replaceWith(row); return; }
      var empty = body.querySelector("tr.empty");
      if (empty) { empty.remove(); }
      for (var k = 0; k < rows.length; k++) {
        var c = rows[k].dataset.created;
        if (c < d.created || (c === d.created && rows[k].dataset.job > d.name)) { body.insertBefore(row, rows[k]); return; }
      }
      body.appendChild(row);
    };
    if (table.dataset.stream && window.EventSource) {
      var list = new EventSource(table.dataset.stream);
      list.onopen = function () { say("Newest first; live: changes appear as they happen."); };
      list.addEventListener("job", function (ev) {
        upsert(JSON.parse(ev.data));
        say("Newest first; live, updated at " + new Date().toLocaleTimeString() + ".");
      });
      list.addEventListener("replaced", function () { list.close(); startPolling("The list is live in a newer page of this session."); });
      list.onerror = function () {
        // CLOSED: refused (no watch right, too many streams, logged out); otherwise the
        // browser opens the stream again by itself.
        if (list.readyState === EventSource.CLOSED) { startPolling("The live list is not available."); }
      };
    } else {
      startPolling("");
    }
  }
  // A running job: follow its phase stream; reload once it has finished, for the result.
  var summary = document.getElementById("summary");
  if (summary && summary.dataset.events && window.EventSource) {
    var es = new EventSource(summary.dataset.events);
    es.addEventListener("status", function (ev) {
      var st = JSON.parse(ev.data);
      var phase = document.getElementById("job-phase");
      if (phase) { phase.textContent = st.phase; }
      var score = document.getElementById("job-score");
      if (score && st.score) { score.textContent = st.score; }
      say("Phase " + st.phase + (st.node ? " on " + st.node : "") + ".");
    });
    es.addEventListener("end", function () { es.close(); window.location.reload(); });
    es.onerror = function () { es.close(); say("The live status stopped; reload the page to see the latest."); };
  }
})();
