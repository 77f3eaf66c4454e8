// VMAFX console: keeps a job list and a running job's page live. Every page works
// without it.
"use strict";
(function () {
  function say(text) {
    var s = document.getElementById("live-status");
    if (s) { s.textContent = text; }
  }
  // The job list: fetch the rows again every 5 seconds.
  var table = document.getElementById("jobs");
  if (table && table.dataset.refresh) {
    var body = table.querySelector("tbody");
    setInterval(function () {
      fetch(table.dataset.refresh, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          if (r.status === 401) { window.location.reload(); throw new Error("logged out"); }
          if (!r.ok) { throw new Error(r.status + " " + r.statusText); }
          return r.text();
        })
        .then(function (html) {
          body.innerHTML = html; // the server's own escaped rows
          say("Updated at " + new Date().toLocaleTimeString() + ".");
        })
        .catch(function (e) { say("Could not refresh the list: " + e.message); });
    }, 5000);
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
