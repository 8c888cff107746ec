// The report page's own stylesheet and script, written for it. The script sorts tables on a
// header click, filters the tables marked data-filter as the reader types, follows drill-down
// links (a module narrows the ops and source-lines tables to it, an op opens a row with its whole
// text), wires the flamegraphs' highlight box, and, when the page is opened with #selftest, checks
// that sorting and flamegraph zooming work and records the outcome on <body data-selftest> for
// headless browser tests. Untrusted text only ever goes into the page as text (textContent).
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
.tablewrap { overflow-x: auto; max-width: 100%; }
table.sortable { border-collapse: collapse; font-size: 13px; margin: 4px 0 8px; }
table.sortable th { background: #f2f2f2; cursor: pointer; text-align: left; padding: 4px 8px;
                    border-bottom: 2px solid #ccc; white-space: nowrap; user-select: none; }
table.sortable th[aria-sort=ascending]::after { content: " \25B2"; }
table.sortable th[aria-sort=descending]::after { content: " \25BC"; }
table.sortable td { padding: 3px 8px; border-bottom: 1px solid #eee; vertical-align: top; }
table.sortable td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable td.name > div, table.sortable td.long > div {
  max-width: 36em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
table.sortable td.long > div { max-width: 24em; }
table.sortable tbody tr:hover { background: #f7f9ff; }
button.drill { font: inherit; color: #2a5db0; background: none; border: 0; padding: 0;
               cursor: pointer; text-align: left; }
button.drill:hover { text-decoration: underline; }
td.long button.drill, td.name button.drill { display: block; max-width: 100%; overflow: hidden;
                       text-overflow: ellipsis; white-space: nowrap; }
tr.detail > td { background: #fafbfd; padding: 6px 12px 10px; }
tr.detail dl.kv { font-size: 13px; margin: 0; }
tr.detail dd { overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", monospace;
               font-size: 12px; }
.tools { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center; font-size: 13px;
         margin: 8px 0 2px; }
.tools input[type=search] { width: 24em; font: inherit; padding: 2px 6px; }
.chip { background: #e8eefc; border-radius: 10px; padding: 1px 4px 1px 10px; white-space: nowrap; }
.chip button { font: inherit; border: 0; background: none; cursor: pointer; color: #555; }
dl.kv { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; font-size: 14px; }
dl.kv dt { color: #555; } dl.kv dd { margin: 0; }
ul.obs li { margin: 4px 0; }
.chart text { font-family: system-ui, sans-serif; font-size: 11px; fill: #333; }
.chart.wide text, .chart.scatter text { font-size: 12px; }
.chart.wide { display: block; width: 100%; height: auto; max-width: 1500px; }
.chart.scatter { display: block; width: 100%; height: auto; max-width: 960px; }
.flame-tools { display: flex; gap: 10px; align-items: center; font-size: 13px; margin: 4px 0; }
.flame-tools input { width: 24em; font: inherit; padding: 2px 6px; }
.flame { overflow-x: auto; border: 1px solid #eee; }
.flame > svg { display: block; }
)CSS";

inline constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };
  // Body rows without the detail rows the script adds.
  function rowsOf(table) {
    return Array.prototype.filter.call(table.tBodies[0].rows, function (r) {
      return !r.classList.contains('detail');
    });
  }
  function closeDetails(table) {
    each(table.querySelectorAll('tr.detail'), function (r) { r.remove(); });
  }

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
    each(th.parentNode.children, function (o) { o.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    closeDetails(table);
    var body = table.tBodies[0];
    var rows = rowsOf(table);
    var sign = dir === 'ascending' ? 1 : -1;
    rows.sort(function (a, b) {
      var x = cellKey(a.cells[idx], num), y = cellKey(b.cells[idx], num);
      return x < y ? -sign : (x > y ? sign : 0);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  each(document.querySelectorAll('table.sortable th'), function (th) {
    th.addEventListener('click', function () { sortBy(th); });
    th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sortBy(th); });
  });

  // Filtering: the text typed in a table's box (every cell, whole texts included) and the scope
  // a drill-down link set (data-KEY attributes of the rows). Rows marked data-extra are there
  // for drilling: hidden while neither is set.
  function rowText(r) {
    if (r.jpText === undefined) {
      var parts = [];
      each(r.cells, function (td) { parts.push(td.textContent, td.getAttribute('title') || ''); });
      r.jpText = parts.join('\n').toLowerCase();
    }
    return r.jpText;
  }
  function state(table) {
    if (!table.jpState) table.jpState = {text: '', scope: {}};
    return table.jpState;
  }
  function apply(table) {
    var st = state(table), text = st.text.trim().toLowerCase();
    var keys = Object.keys(st.scope), active = text !== '' || keys.length > 0;
    var shown = 0, rows = rowsOf(table);
    rows.forEach(function (r) {
      var ok = active || !r.hasAttribute('data-extra');
      keys.forEach(function (k) { if (r.getAttribute('data-' + k) !== st.scope[k]) ok = false; });
      if (ok && text) ok = rowText(r).indexOf(text) >= 0;
      r.hidden = !ok;
      var next = r.nextElementSibling;
      if (next && next.classList.contains('detail')) next.hidden = !ok;
      if (ok) ++shown;
    });
    var tools = table.jpTools;
    if (!tools) return;
    tools.count.textContent = shown + ' of ' + rows.length + ' rows' +
        (active ? '' : (shown < rows.length ? ' (more when you filter or drill down)' : ''));
    tools.scope.textContent = '';
    keys.forEach(function (k) {
      var chip = document.createElement('span');
      chip.className = 'chip';
      chip.textContent = k + ' = ' + (st.scope[k] === '' ? '(none)' : st.scope[k]);
      var x = document.createElement('button');
      x.type = 'button';
      x.textContent = '\u2715';
      x.title = 'show all ' + k + 's';
      x.addEventListener('click', function () { delete st.scope[k]; apply(table); });
      chip.appendChild(x);
      tools.scope.appendChild(chip);
    });
  }
  each(document.querySelectorAll('table.sortable[data-filter]'), function (table) {
    var tools = document.createElement('div');
    tools.className = 'tools';
    var input = document.createElement('input');
    input.type = 'search';
    input.placeholder = 'filter rows (any column)';
    input.setAttribute('aria-label', 'filter ' + table.id);
    var scope = document.createElement('span'), count = document.createElement('span');
    count.className = 'muted';
    tools.appendChild(input);
    tools.appendChild(scope);
    tools.appendChild(count);
    var anchor = table.parentNode.classList.contains('tablewrap') ? table.parentNode : table;
    anchor.parentNode.insertBefore(tools, anchor);
    table.jpTools = {input: input, scope: scope, count: count};
    input.addEventListener('input', function () { state(table).text = input.value; apply(table); });
    apply(table);
  });

  // Device pickers: show the chart of the picked device (the elements of class data-charts with
  // its data-device) and fold the target tables to its rows; the table's chip clears the fold.
  each(document.querySelectorAll('select.device-picker'), function (select) {
    function pick() {
      var device = select.value;
      each(document.querySelectorAll('.' + select.getAttribute('data-charts')), function (c) {
        c.hidden = c.getAttribute('data-device') !== device;
      });
      select.getAttribute('data-targets').split(' ').forEach(function (id) {
        var t = document.getElementById(id);
        if (!t) return;
        state(t).scope = {device: device};
        apply(t);
      });
    }
    select.addEventListener('change', pick);
    pick();
  });

  // Drill-down: narrow the target tables to the link's scope and go to the first of them; or
  // open a row under this one with every column's whole text.
  function drill(button) {
    var scope = JSON.parse(button.getAttribute('data-scope'));
    var first = null;
    button.getAttribute('data-targets').split(' ').forEach(function (id) {
      var t = document.getElementById(id);
      if (!t) return;
      var st = state(t);
      st.scope = {};
      Object.keys(scope).forEach(function (k) { st.scope[k] = scope[k]; });
      st.text = '';
      if (t.jpTools) t.jpTools.input.value = '';
      apply(t);
      if (!first) first = t;
    });
    if (first) (first.closest('section') || first).scrollIntoView();
  }
  function toggleDetail(button) {
    var tr = button.closest('tr'), next = tr.nextElementSibling;
    if (next && next.classList.contains('detail')) { next.remove(); return; }
    var heads = tr.closest('table').tHead.rows[0].cells;
    var row = document.createElement('tr'), td = document.createElement('td');
    var dl = document.createElement('dl');
    row.className = 'detail';
    td.colSpan = heads.length;
    dl.className = 'kv';
    each(tr.cells, function (cell, i) {
      var text = cell.getAttribute('title') || cell.textContent;
      if (!text) return;
      var dt = document.createElement('dt'), dd = document.createElement('dd');
      dt.textContent = heads[i] ? heads[i].textContent : '';
      var link = cell.querySelector('button.drill[data-targets]');
      if (link) {  // the whole text, still a link
        var copy = link.cloneNode(false);
        copy.textContent = text;
        dd.appendChild(copy);
      } else {
        dd.textContent = text;
      }
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
    td.appendChild(dl);
    row.appendChild(td);
    tr.parentNode.insertBefore(row, tr.nextSibling);
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest ? e.target.closest('button.drill') : null;
    if (!b) return;
    if (b.hasAttribute('data-detail')) toggleDetail(b); else drill(b);
  });

  // Flamegraphs: highlight the frames a regular expression matches, reset the zoom.
  each(document.querySelectorAll('.flame-tools'), function (tools) {
    var svg = tools.nextElementSibling && tools.nextElementSibling.querySelector('svg');
    if (!svg || !svg.jpSearch) return;
    var input = tools.querySelector('.flame-search'), note = tools.querySelector('.flame-match');
    input.addEventListener('input', function () {
      var re = null;
      try { re = input.value ? new RegExp(input.value, 'i') : null; } catch (err) {
        note.textContent = 'not a regular expression';
        return;
      }
      var share = svg.jpSearch(re);
      note.textContent = re ? 'matched: ' + (100 * share).toFixed(1) + '% of the whole' : '';
    });
    tools.querySelector('.flame-reset').addEventListener('click', function () { svg.jpReset(); });
  });

  var data = JSON.parse(document.getElementById('report-data').textContent);

  // Clicks every table's first numeric header twice and one frame of every flamegraph, and checks
  // the outcome: what a person would do, done by the page so that a headless browser can see it.
  function selftest() {
    var problems = [], tables = 0, flames = 0;
    Object.keys(data.rows).forEach(function (id) {
      var t = document.getElementById(id);
      if (!t) { problems.push(id + ': missing'); return; }
      if (rowsOf(t).length !== data.rows[id]) problems.push(id + ': row count');
    });
    each(document.querySelectorAll('table.sortable'), function (t) {
      var th = t.querySelector('th[data-type=num]');
      if (!th || rowsOf(t).length < 2) return;
      var idx = Array.prototype.indexOf.call(th.parentNode.children, th);
      var values = function () {
        return rowsOf(t).map(function (r) { return Number(r.cells[idx].getAttribute('data-v')); });
      };
      th.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      var v = values();
      for (var i = 1; i < v.length; ++i) if (v[i - 1] < v[i]) { problems.push(t.id + ': desc'); break; }
      th.dispatchEvent(new MouseEvent('click', {bubbles: true}));
      v = values();
      for (i = 1; i < v.length; ++i) if (v[i - 1] > v[i]) { problems.push(t.id + ': asc'); break; }
      ++tables;
    });
    each(document.querySelectorAll('.flame > svg'), function (svg) {
      if (svg.getAttribute('data-ready') !== '1') { problems.push('flame script did not run'); return; }
      var full = Number(svg.getAttribute('data-width')) - 2 * Number(svg.getAttribute('data-pad'));
      var target = null;
      each(svg.querySelectorAll('g.f'), function (g) {
        var w = Number(g.getAttribute('data-w'));
        if (Number(g.getAttribute('data-d')) >= 1 && w > 0 && (!target || w < Number(target.getAttribute('data-w')))) target = g;
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
