//===- Html.cpp - Self-contained HTML view of a causal profile ------------===//
//
// One file, readable offline in any browser: the analysis is embedded as
// JSON, and a small inline script draws one SVG plot per (line, progress
// point) with the measured points, their bootstrap band and the regression
// line, plus sorting and filtering. No network, no external scripts, styles
// or fonts. With a waits sidecar, a section "What the threads wait for" with
// the wait-for graph as inline SVG laid out here (tools/report/Waits.cpp);
// with a paths sidecar, a section "Call paths" with the calling-context
// trees of the chosen functions as nested <details> (tools/report/Paths.cpp).
// The element #causal-status reports "ready: N plots" once the
// script has drawn everything, or "error: ..." (the browser test reads it).
//
//===----------------------------------------------------------------------===//
#include "Report.h"

namespace causal::report {

namespace {

const char *const kHead = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>causal profile</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.2em; color: #222; background: #fafafa; }
h1 { font-size: 1.3em; margin: 0 0 .3em 0; }
#summary { font-size: .9em; color: #444; margin-bottom: .8em; }
#summary code { background: #eee; padding: 0 .2em; }
#controls { display: flex; flex-wrap: wrap; gap: .8em; align-items: center; margin-bottom: .8em; font-size: .9em; }
#controls input, #controls select { font-size: 1em; padding: .15em .3em; max-width: 24em; }
#plots { display: flex; flex-wrap: wrap; gap: 10px; }
.card { background: #fff; border: 1px solid #ddd; border-radius: 4px; padding: 6px 8px; width: 360px; }
.card h3 { font-size: .85em; margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
.card .meta { font-size: .78em; color: #555; margin: 2px 0 4px 0; }
.card.wait { border-left: 4px solid #6d4c9f; }
.card .waitkind { font-size: .78em; color: #6d4c9f; font-weight: bold; }
.card.path { border-left: 4px solid #0f766e; }
.card .caller { font-size: .78em; color: #0f766e; font-weight: bold; word-break: break-all; }
.card .function { font-size: .8em; font-family: ui-monospace, monospace; word-break: break-all; }
.card pre.source { font-size: .78em; margin: 2px 0; padding: 2px 4px; background: #f4f4f4; white-space: pre-wrap; }
.card .meta b.pos { color: #1a7f37; } .card .meta b.neg { color: #c62828; }
svg.plot text { font-size: 10px; fill: #444; }
svg.plot .grid { stroke: #eee; } svg.plot .zero { stroke: #999; }
svg.plot .band { fill: #4a7bd0; fill-opacity: .18; stroke: none; }
svg.plot .fit { stroke: #c2410c; stroke-width: 1.5; fill: none; }
svg.plot .fitband { fill: #c2410c; fill-opacity: .10; stroke: none; }
svg.plot .bound { stroke: #6b7280; stroke-width: 1; stroke-dasharray: 4 3; fill: none; }
.card .meta .exceeded { color: #c62828; font-weight: bold; }
.card .meta .verdict { font-weight: bold; } .card .meta .confirmed { color: #2e7d32; }
.card .meta .refuted { color: #c62828; } .card .meta .open { color: #8a6d00; }
svg.plot .curve { stroke: #4a7bd0; stroke-width: 1; fill: none; }
svg.plot circle { fill: #1f4e9c; }
#status { font-size: .75em; color: #888; margin-top: 1em; }
#status.error { color: #c62828; font-weight: bold; }
table { border-collapse: collapse; font-size: .8em; margin-top: .5em; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; }
th { background: #f0f0f0; }
.hidden { display: none; }
</style>
</head>
<body>
<h1>Causal profile</h1>
<div id="summary"></div>
<div id="controls">
  <label>filter <input id="filter" type="search" placeholder="file, line or progress point"></label>
  <label>progress point <select id="point"><option value="">all</option></select></label>
  <label>sort by <select id="sort">
    <option value="rank">rank</option>
    <option value="slope">slope</option>
    <option value="max">maximum impact</option>
    <option value="name">name</option>
  </select></label>
  <span id="count"></span>
</div>
<div id="plots"></div>
<h2 style="font-size:1em">Not enough data</h2>
<div id="notenough"></div>
<div id="status">loading</div>
<script type="application/json" id="causal-data">
)HTML";

const char *const kScript = R"HTML(
</script>
<script>
(function () {
  'use strict';
  var statusBox = document.getElementById('status');
  function fail(message) {
    statusBox.textContent = 'error: ' + message;
    statusBox.className = 'error';
  }
  window.addEventListener('error', function (event) { fail(event.message || 'script error'); });
  try {
    var data = JSON.parse(document.getElementById('causal-data').textContent);
    var SVGNS = 'http://www.w3.org/2000/svg';
    function svg(name, attributes, parent) {
      var node = document.createElementNS(SVGNS, name);
      for (var key in attributes) node.setAttribute(key, attributes[key]);
      if (parent) parent.appendChild(node);
      return node;
    }
    function html(name, text, parent, className) {
      var node = document.createElement(name);
      if (text !== undefined && text !== null) node.textContent = text;
      if (className) node.className = className;
      if (parent) parent.appendChild(node);
      return node;
    }
    function pct(value, digits) {
      if (value === null || value === undefined || !isFinite(value)) return 'n/a';
      return (value >= 0 ? '+' : '') + (value * 100).toFixed(digits === undefined ? 1 : digits) + '%';
    }
    function num(value) {
      if (value === null || value === undefined || !isFinite(value)) return 'n/a';
      return (value >= 0 ? '+' : '') + value.toFixed(3);
    }
    function interval(ci, asPercent) {
      if (!ci) return '[no interval]';
      return '[' + (asPercent ? pct(ci[0]) : num(ci[0])) + ', ' + (asPercent ? pct(ci[1]) : num(ci[1])) + ']';
    }

    // Summary.
    var summary = document.getElementById('summary');
    var o = data.options;
    summary.innerHTML = '';
    html('div', 'Profile ' + data.inputs.join(', ') + ': ' + data.runs + ' run(s), ' +
      data.experiments + ' experiments, ' + (data.experiment_time_ns / 1e9).toFixed(1) +
      ' s of experiments' + (data.runs_with_runtime ? ', ' + (data.runtime_ns / 1e9).toFixed(1) + ' s of run time' : '') + '.', summary);
    html('div', 'Phase correction (Eq. 8): ' + (o.phase_correction ? 'on' : 'off') + '. ' +
      (o.bootstrap_rounds ? Math.round(o.confidence * 100) + '% bootstrap intervals (' + o.bootstrap_rounds + ' rounds, seed ' + o.seed + ').' : 'No intervals.') +
      ' Positive program speedup means the program gets faster.', summary);
    if (data.thin_runs)
      html('div', 'Thin profile: ' + data.thin_runs + ' run(s) lost most of their samples (' +
        data.samples_arrived + ' of ' + data.samples_expected + ' expected arrived; see the warnings).', summary);
    if (data.timer_samples > 0 && data.samples_arrived > 0)
      html('div', (data.timer_samples >= data.samples_arrived ? 'Every sample' :
        ({0: 'Under 1', 100: 'Over 99'}[Math.round(100 * data.timer_samples / data.samples_arrived)] ||
          Math.round(100 * data.timer_samples / data.samples_arrived)) + ' % of the samples') +
        ' came from CPU-time timers, which include kernel time: lines of system calls carry it.', summary);
    var pointNames = data.progress_points.map(function (p) { return p.name + ' (' + p.kind + ')'; });
    html('div', 'Progress points: ' + (pointNames.length ? pointNames.join(', ') : 'none'), summary);
    html('div', 'Each plot: measured points (blue) with their bootstrap band, least-squares line through the origin (orange) with its interval.', summary);

    var pointSelect = document.getElementById('point');
    data.progress_points.forEach(function (p) {
      var option = html('option', p.name + ' (' + p.kind + ')', pointSelect);
      option.value = p.name;
    });

    // One plot per (line, progress point).
    var plots = [];
    data.lines.forEach(function (line) {
      line.points.forEach(function (point) {
        plots.push({ line: line.line, rank: line.rank, point: point,
                     func: line.function, source: line.source, waitKind: line.wait_kind,
                     caller: line.caller, location: line.location,
                     doubtful: data.false_discovery_control !== null && !line.discovery,
                     confirmation: line.confirmation });
      });
    });
    var low = 0, high = 0;
    plots.forEach(function (plot) {
      plot.point.curve.forEach(function (c) {
        var values = [c.program_speedup];
        if (c.ci) { values.push(c.ci[0]); values.push(c.ci[1]); }
        values.forEach(function (v) { if (isFinite(v)) { low = Math.min(low, v); high = Math.max(high, v); } });
      });
    });
    low = Math.max(low, -1); high = Math.min(high, 2);
    if (high - low < 0.02) high = low + 0.02;
    var span = high - low; low -= span * 0.05; high += span * 0.05;
    var steps = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1];
    var tick = steps[steps.length - 1];
    for (var s = 0; s < steps.length; s++) if ((high - low) / steps[s] <= 6) { tick = steps[s]; break; }

    var W = 350, H = 210, ML = 48, MR = 16, MT = 8, MB = 34;
    var PW = W - ML - MR, PH = H - MT - MB;
    function X(speedup) { return ML + speedup * PW; }
    function Y(value) { return MT + (high - Math.max(low, Math.min(high, value))) / (high - low) * PH; }

    var container = document.getElementById('plots');
    plots.forEach(function (plot, index) {
      var p = plot.point;
      plot.cardClass = plot.waitKind ? 'card wait' : plot.caller ? 'card path' : 'card';
      var card = html('div', null, container, plot.cardClass);
      plot.card = card;
      html('h3', '#' + plot.rank + (plot.doubtful ? '?' : '') + ' ' + plot.line, card);
      // A wait target: the time blocked in this call, ended by a KIND wait.
      if (plot.waitKind) html('div', 'wait target: the ' + plot.waitKind + ' waits of the call on this line', card, 'waitkind');
      // A line in one calling context: its samples counted only when called from the caller.
      if (plot.caller) html('div', 'calling context: ' + plot.location + ' when called from ' + plot.caller, card, 'caller');
      if (plot.func) html('div', 'in ' + plot.func, card, 'function');
      if (plot.source) html('pre', plot.source, card, 'source');
      var meta = html('div', null, card, 'meta');
      var significant = p.slope_ci && (p.slope_ci[0] > 0 || p.slope_ci[1] < 0);
      html('span', p.name + ' (' + p.kind + ') \u2014 slope ', meta);
      html('b', num(p.slope), meta, significant ? (p.slope > 0 ? 'pos' : 'neg') : '');
      var maxText = p.max_impact === null ? 'n/a' : pct(p.max_impact) + ' at ' +
        Math.round(p.max_impact_speedup * 100) + '% ' + interval(p.max_impact_ci, true);
      html('span', ' ' + interval(p.slope_ci, false) + ', max ' + maxText +
        ', ' + p.experiments + ' experiments' +
        (p.phase_corrected ? ', phase \u00d7' + p.phase_factor.toFixed(2) : '') +
        (p.bound ? ', bound b ' + p.bound.limit.toFixed(3) : ''), meta);
      if (plot.doubtful)
        html('span', ' not kept by the false-discovery control: may be noise', meta, 'exceeded');
      if (p.bound && p.bound.exceeded)
        html('span', ' exceeded: noise, ranked below the lines within their bound', meta, 'exceeded');
      var c = plot.confirmation;
      if (c && c.point === p.name && c.kind === p.kind)
        html('div', c.verdict + ' by A/B runs: ' + (c.estimate === null ? 'n/a' : pct(c.estimate)) + ' ' +
          interval(c.ci, true) + ' at ' + Math.round(c.speedup * 100) + '%' +
          (c.prediction === null ? '' : ', predicted ' + pct(c.prediction) + ' ' + interval(c.prediction_ci, true)) +
          ', ' + c.pairs + ' pairs — ' + c.reason, meta, 'verdict ' + c.verdict);
      var root = svg('svg', { 'class': 'plot', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H }, card);
      var clipId = 'clip' + index;
      var clip = svg('clipPath', { id: clipId }, svg('defs', {}, root));
      svg('rect', { x: ML, y: MT, width: PW, height: PH }, clip);
      [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
        svg('line', { 'class': 'grid', x1: X(t), x2: X(t), y1: MT, y2: MT + PH }, root);
        svg('text', { x: X(t), y: MT + PH + 12, 'text-anchor': 'middle' }, root).textContent = Math.round(t * 100) + '%';
      });
      for (var v = Math.ceil(low / tick) * tick; v <= high + 1e-9; v += tick) {
        svg('line', { 'class': Math.abs(v) < 1e-9 ? 'zero' : 'grid', x1: ML, x2: ML + PW, y1: Y(v), y2: Y(v) }, root);
        svg('text', { x: ML - 4, y: Y(v) + 3, 'text-anchor': 'end' }, root).textContent = Math.round(v * 100) + '%';
      }
      svg('text', { x: ML + PW / 2, y: H - 4, 'text-anchor': 'middle' }, root).textContent = 'line speedup';
      svg('text', { x: 10, y: MT + PH / 2, 'text-anchor': 'middle', transform: 'rotate(-90 10 ' + (MT + PH / 2) + ')' }, root).textContent = 'program speedup';
      var area = svg('g', { 'clip-path': 'url(#' + clipId + ')' }, root);
      var withCi = p.curve.filter(function (c) { return c.ci; });
      if (withCi.length > 1) {
        var d = '';
        withCi.forEach(function (c, i) { d += (i ? 'L' : 'M') + X(c.speedup).toFixed(1) + ',' + Y(c.ci[1]).toFixed(1); });
        for (var i = withCi.length - 1; i >= 0; i--) d += 'L' + X(withCi[i].speedup).toFixed(1) + ',' + Y(withCi[i].ci[0]).toFixed(1);
        svg('path', { 'class': 'band', d: d + 'Z' }, area);
      }
      var line = '';
      p.curve.forEach(function (c, i) { line += (i ? 'L' : 'M') + X(c.speedup).toFixed(1) + ',' + Y(c.program_speedup).toFixed(1); });
      svg('path', { 'class': 'curve', d: line }, area);
      if (p.slope_ci) {
        svg('path', { 'class': 'fitband', d: 'M' + X(0) + ',' + Y(0) + 'L' + X(1) + ',' + Y(p.slope_ci[0]).toFixed(1) +
          'L' + X(1) + ',' + Y(p.slope_ci[1]).toFixed(1) + 'Z' }, area);
      }
      svg('line', { 'class': 'fit', x1: X(0), y1: Y(0), x2: X(1), y2: Y(p.slope) }, area);
      // The physical bound: no speedup s of the line can give more than s x b.
      if (p.bound)
        svg('line', { 'class': 'bound', x1: X(0), y1: Y(0), x2: X(1), y2: Y(p.bound.limit) }, area);
      p.curve.forEach(function (c) {
        var dot = svg('circle', { cx: X(c.speedup), cy: Y(c.program_speedup), r: 3 }, area);
        svg('title', {}, dot).textContent = 'line speedup ' + Math.round(c.speedup * 100) + '%: program ' +
          pct(c.program_speedup) + ' ' + interval(c.ci, true) + ', ' + c.experiments + ' experiments';
      });
    });

    // Sorting and filtering.
    var filterBox = document.getElementById('filter');
    var sortBox = document.getElementById('sort');
    var countBox = document.getElementById('count');
    function update() {
      var text = filterBox.value.toLowerCase();
      var onlyPoint = pointSelect.value;
      var order = plots.slice();
      var by = sortBox.value;
      order.sort(function (a, b) {
        if (by === 'slope' && a.point.slope !== b.point.slope) return b.point.slope - a.point.slope;
        if (by === 'max' && a.point.max_impact !== b.point.max_impact) return b.point.max_impact - a.point.max_impact;
        // By name: a line, then its per-caller curves and waits (same location).
        var la = a.location || a.line, lb = b.location || b.line;
        if (by === 'name' && la !== lb) return la < lb ? -1 : 1;
        if (by === 'name' && a.line !== b.line) return a.line < b.line ? -1 : 1;
        if (a.rank !== b.rank) return a.rank - b.rank;
        return a.point.name < b.point.name ? -1 : a.point.name > b.point.name ? 1 : 0;
      });
      var visible = 0;
      order.forEach(function (plot) {
        var show = (!text || (plot.line + ' ' + (plot.func || '') + ' ' + plot.point.name).toLowerCase().indexOf(text) >= 0) &&
          (!onlyPoint || plot.point.name === onlyPoint);
        plot.card.className = plot.cardClass + (show ? '' : ' hidden');
        if (show) visible++;
        container.appendChild(plot.card);
      });
      countBox.textContent = visible + ' of ' + plots.length + ' plots';
    }
    // A page address ending in #filter=TEXT&sort=KEY&point=NAME presets the controls.
    location.hash.replace(/^#/, '').split('&').forEach(function (part) {
      var pair = part.split('=');
      if (pair.length !== 2) return;
      var value = decodeURIComponent(pair[1]);
      if (pair[0] === 'filter') filterBox.value = value;
      if (pair[0] === 'sort') sortBox.value = value;
      if (pair[0] === 'point') pointSelect.value = value;
    });
    filterBox.addEventListener('input', update);
    sortBox.addEventListener('change', update);
    pointSelect.addEventListener('change', update);
    update();

    // Lines without a curve are listed, not hidden.
    var notEnough = document.getElementById('notenough');
    if (data.not_enough_data.length === 0) {
      html('p', 'none', notEnough);
    } else {
      var table = html('table', null, notEnough);
      var head = html('tr', null, table);
      ['line', 'function', 'source', 'progress point', 'reason', 'samples', 'distinct speedups', 'experiments', 'lacks', 'more running'].forEach(function (t) { html('th', t, head); });
      data.not_enough_data.slice(0, 500).forEach(function (entry) {
        var row = html('tr', null, table);
        var more = entry.more_seconds === null ? '' : entry.more_seconds < 90 ? Math.ceil(entry.more_seconds) + ' s' :
          entry.more_seconds < 5400 ? Math.ceil(entry.more_seconds / 60) + ' min' : Math.ceil(entry.more_seconds / 3600) + ' h';
        [entry.line, entry.function || '', entry.source || '', entry.point, entry.reason, entry.samples,
         entry.distinct_speedups, entry.experiments, entry.lacking, more].forEach(function (t) { html('td', String(t), row); });
      });
      if (data.not_enough_data.length > 500) html('p', '... and ' + (data.not_enough_data.length - 500) + ' more', notEnough);
    }
    if (statusBox.className !== 'error') {
      statusBox.textContent = 'ready: ' + plots.length + ' plots';
      statusBox.setAttribute('data-plots', String(plots.length));
    }
  } catch (error) {
    fail(error && error.message ? error.message : String(error));
  }
})();
</script>
</body>
</html>
)HTML";

} // namespace

void renderHtml(std::ostream &out, const Analysis &analysis, const ReportContext &context) {
  std::string head = kHead;
  static const char kStatus[] = "<div id=\"status\">";
  if (context.waits || !context.waitsProblem.empty()) {
    head.insert(head.find(kStatus),
                waitsHtmlSection(context.waits ? *context.waits : profile::WaitAnalysis(),
                                 context.waits ? "" : context.waitsProblem, &analysis));
  }
  if ((context.paths && context.pathsFile) || !context.pathsProblem.empty())
    head.insert(head.find(kStatus),
                pathsHtmlSection(context.paths, context.pathsFile, context.pathsProblem));
  out << head;
  writeAnalysisJson(out, analysis, context);
  out << kScript;
}

std::string xmlEscape(const std::string &text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '&':
      escaped += "&amp;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

} // namespace causal::report
