// dbtrail console: the moment picker's click and the live updates of a
// running job's page. No library, no build step; served from the binary.
(function () {
  'use strict';

  function pad(n) { return (n < 10 ? '0' : '') + n; }

  // utc is d as a moment text the API reads (UTC without a zone).
  function utc(d) {
    return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate()) + ' ' +
      pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + ':' + pad(d.getUTCSeconds());
  }

  // The coverage chart under the moment picker: a click picks its time
  // into the moment fields (the picker's and the start forms').
  var cov = document.querySelector('#coverage svg');
  if (cov) {
    cov.addEventListener('click', function (ev) {
      var box = cov.getBoundingClientRect();
      var vb = cov.viewBox.baseVal;
      var x = (ev.clientX - box.left) / box.width * vb.width;
      var x0 = Number(cov.dataset.x0), from = Number(cov.dataset.from), secs = Number(cov.dataset.seconds);
      if (!(x >= x0) || !(secs > 0)) { return; }
      // A snapshot's tick picks its exact cut (GTID or binlog position);
      // elsewhere the time under the click.
      var text = ev.target.getAttribute && ev.target.getAttribute('data-moment');
      var zone = '';
      if (!text) {
        text = utc(new Date((from + (x - x0) / (vb.width - x0) * secs) * 1000));
        zone = ' (UTC)';
      }
      ['m-at', 'e-at', 'r-at'].forEach(function (id) {
        var el = document.getElementById(id);
        if (el) { el.value = text; }
      });
      var said = document.getElementById('picked');
      if (said) { said.textContent = 'Picked ' + text + zone + ': press Show, or review an export or restore of it.'; }
    });
  }

  // A running job's page: its state, progress and retries from the
  // console's JSON every 3 s; when it ends, the page reloads (its result).
  var job = document.querySelector('[data-live]');
  if (job) {
    var url = job.getAttribute('data-live');
    var poll = function () {
      fetch(url, { credentials: 'same-origin', headers: { 'Accept': 'application/json' } }).then(function (r) {
        if (!r.ok) { throw new Error('status ' + r.status); }
        return r.json();
      }).then(function (j) {
        if (j.state !== 'running') { window.location.reload(); return; }
        var prog = document.getElementById('job-progress');
        if (prog) { prog.textContent = j.progress || ''; }
        var retr = document.getElementById('job-retrying');
        if (retr) { retr.textContent = j.retrying || ''; }
        var at = document.getElementById('job-polled');
        if (at) { at.textContent = 'updated ' + utc(new Date()) + 'Z'; }
        window.setTimeout(poll, 3000);
      }).catch(function () {
        var at = document.getElementById('job-polled');
        if (at) { at.textContent = 'live updates stopped: reload the page'; }
      });
    };
    window.setTimeout(poll, 3000);
  }

  // The overview: capture's lag, the last commit, the running jobs' count
  // and the plots from the console's JSON every 10 s.
  var ov = document.getElementById('overview-live');
  if (ov) {
    var ovURL = ov.getAttribute('data-overview');
    var set = function (id, text) {
      var el = document.getElementById(id);
      if (el && text) { el.textContent = text; }
    };
    var pollOverview = function () {
      fetch(ovURL, { credentials: 'same-origin', headers: { 'Accept': 'application/json' } }).then(function (r) {
        if (!r.ok) { throw new Error('status ' + r.status); }
        return r.json();
      }).then(function (o) {
        set('lag', o.lag);
        set('last-commit', o.last_commit);
        set('running-count', String(o.running));
        // The plots, drawn by the server (its templates escape every value).
        var plots = { 'lag-plot': o.lag_plot, 'rate-plot': o.rate_plot };
        Object.keys(plots).forEach(function (id) {
          var fig = document.getElementById(id);
          if (fig && plots[id]) { fig.innerHTML = plots[id]; }
        });
        set('live-at', '· updated ' + utc(new Date()) + 'Z');
        window.setTimeout(pollOverview, 10000);
      }).catch(function () {
        set('live-at', '· live updates stopped: reload the page');
      });
    };
    window.setTimeout(pollOverview, 10000);
  }
}());
