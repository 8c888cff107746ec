// The report page's own stylesheet and script, written for it. The script sorts tables on a
// header click and, when the page is opened with #selftest, checks that sorting and flamegraph
// zooming work and records the outcome on <body data-selftest> for headless browser tests.
#pragma once

namespace jaxprof::report_assets {

inline constexpr const char* kCss = R"CSS(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 24px 48px;
       color: #222; background: #fff; }
header { border-bottom: 1px solid #ddd; padding: 12px 0; }
header h1 { margin: 0 0 4px; font-size: 22px; }
nav a { margin-right: 12px; color: #2a5db0; }
section { margin-top: 28px; }
h2 { font-size: 18px; border-bottom: 1px solid #eee; padding-bottom: 4px; }
.none { color: #777; font-style: italic; }
.muted { color: #666; font-size: 13px; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
table.sortable { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
table.sortable th { background: #f2f2f2; cursor: pointer; text-align: left; padding: 4px 8px;
                    border-bottom: 2px solid #ccc; white-space: nowrap; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \25BC"; }
table.sortable td { padding: 3px 8px; border-bottom: 1px solid #eee; max-width: 520px;
                    overflow-wrap: anywhere; vertical-align: top; }
table.sortable td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable tbody tr:hover { background: #f7f9ff; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; font-size: 14px; }
dl.kv dt { color: #555; } dl.kv dd { margin: 0; }
ul.obs li { margin: 4px 0; }
.chart text { font-family: system-ui, sans-serif; font-size: 11px; fill: #333; }
.flame { overflow-x: auto; border: 1px solid #eee; }
.flame > svg { width: 100%; height: auto; max-width: 1200px; display: block; }
)CSS";

inline constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  function cellKey(td, num) {
    return num ? Number(td.getAttribute('data-v')) : td.textContent.toLowerCase();
  }
  function sortBy(th) {
    var table = th.closest('table');
    var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
    var num = th.getAttribute('data-type') === 'num';
    var cur = th.getAttribute('aria-sort');
    var dir = cur ? (cur === 'ascending' ? 'descending' : 'ascending')
                  : (num ? 'descending' : 'ascending');
    Array.prototype.forEach.call(th.parentNode.children, function (o) {
      o.removeAttribute('aria-sort');
    });
    th.setAttribute('aria-sort', dir);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.sort(function (a, b) {
      var x = cellKey(a.cells[idx], num), y = cellKey(b.cells[idx], num);
      return x < y ? -sign : (x > y ? sign : 0);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll('table.sortable th').forEach(function (th) {
    th.addEventListener('click', function () { sortBy(th); });
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sortBy(th); });
  });
  var data = JSON.parse(document.getElementById('report-data').textContent);

  // Clicks every table's first numeric header twice and one frame of every flamegraph, and checks
  // the outcome: what a person would do, done by the page so that a headless browser can see it.
  function selftest() {
    var problems = [], tables = 0, flames = 0;
    Object.keys(data.rows).forEach(function (id) {
      var t = document.getElementById(id);
      if (!t) { problems.push(id + ': missing'); return; }
      if (t.tBodies[0].rows.length !== data.rows[id]) problems.push(id + ': row count');
    });
    document.querySelectorAll('table.sortable').forEach(function (t) {
      var th = t.querySelector('th[data-type=num]');
      if (!th || t.tBodies[0].rows.length < 2) return;
      var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
      var values = function () {
        return Array.prototype.map.call(t.tBodies[0].rows, function (r) {
          return Number(r.cells[idx].getAttribute('data-v'));
        });
      };
      th.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var v = values();
      for (var i = 1; i < v.length; ++i) if (v[i - 1] < v[i]) { problems.push(t.id + ': desc'); break; }
      th.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      v = values();
      for (i = 1; i < v.length; ++i) if (v[i - 1] > v[i]) { problems.push(t.id + ': asc'); break; }
      ++tables;
    });
    document.querySelectorAll('.flame > svg').forEach(function (svg) {
      if (svg.getAttribute('data-ready') !== '1') { problems.push('flame script did not run'); return; }
      var full = Number(svg.getAttribute('data-width')) - 2 * Number(svg.getAttribute('data-pad'));
      var target = null;
      svg.querySelectorAll('g.f').forEach(function (g) {
        var w = Number(g.getAttribute('data-w'));
        if (Number(g.getAttribute('data-d')) >= 2 && w > 0 && (!target || w < Number(target.getAttribute('data-w')))) target = g;
      });
      if (!target) return;
      target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var w = Number(target.querySelector('rect').getAttribute('width'));
      if (Math.abs(w + 0.5 - full) > 1) problems.push('flame did not zoom: ' + w + ' of ' + full);
      ++flames;
    });
    document.body.setAttribute('data-selftest', problems.length ? 'fail: ' + problems.join('; ')
        : 'pass tables=' + tables + ' flames=' + flames);
  }
  if (location.hash === '#selftest') selftest();
  document.body.setAttribute('data-ready', '1');
})();
)JS";

}  // namespace jaxprof::report_assets
