/* tools/flame/flame.js - the script of rec-flame pages (compiled into rec-flame).
 * Reads the profile from the script element "data", folds the (thread, node,
 * weight) triples of the selected threads into the call tree and draws it
 * as absolutely positioned boxes: icicle or flame, click to zoom, search
 * with the matched share, thread/process filter, differential colours. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('data').textContent);
  var S = D.strings, unit = D.unit, diff = D.diff;
  /* nodes: a frame (parent: the previous node), or -(distance to the
   * parent) then a frame */
  var DN = D.nodes, NN = 1, i, j;
  for (j = 0; j < DN.length; j++) if (DN[j] >= 0) NN++;
  var parent = new Int32Array(NN), frame = new Int32Array(NN);
  var depth = new Int32Array(NN);
  parent[0] = -1;
  frame[0] = -1;
  for (i = 1, j = 0; i < NN; i++, j++) {
    parent[i] = i - 1;
    if (DN[j] < 0) parent[i] = i + DN[j++];
    frame[i] = DN[j];
    depth[i] = depth[parent[i]] + 1;  /* parents precede children */
  }
  var maxDepth = 0;
  for (i = 0; i < NN; i++) if (depth[i] > maxDepth) maxDepth = depth[i];
  function fname(f) { return S[D.frames[5 * f]]; }
  function nname(n) { return n ? fname(frame[n]) : 'all'; }
  /* children, ordered by name like flamegraph.pl */
  var kids = [];
  for (i = 0; i < NN; i++) kids.push([]);
  for (i = 1; i < NN; i++) kids[parent[i]].push(i);
  for (i = 0; i < NN; i++)
    if (kids[i].length > 1)
      kids[i].sort(function (a, b) {
        var x = nname(a), y = nname(b);
        return x < y ? -1 : x > y ? 1 : 0;
      });
  var NT = D.threads.length / 4, cells = D.cells, NC = cells.length / 3;

  /* ---- controls ---- */
  var h = [];
  h.push('<h1>' + esc(D.title) + '</h1><div id="bar">');
  h.push('<select id="sel"><option value="all">all threads</option>');
  var procs = {};
  for (var t = 0; t < NT; t++) procs[D.threads[4 * t]] = 1;
  Object.keys(procs).forEach(function (p) {
    h.push('<option value="p' + p + '">process ' + p + '</option>');
  });
  var seen = {};
  for (t = 0; t < NT; t++) {
    var key = D.threads[4 * t] + '/' + D.threads[4 * t + 1];
    if (seen[key]) continue;
    seen[key] = 1;
    var nm = D.threads[4 * t + 2] ? S[D.threads[4 * t + 2]] + ' ' : '';
    h.push('<option value="t' + key + '">' + esc(nm) + 'tid ' +
           D.threads[4 * t + 1] + ' (pid ' + D.threads[4 * t] + ')</option>');
  }
  h.push('</select><button id="flip">flame</button>' +
         '<button id="reset">reset zoom</button>' +
         '<input id="q" type="search" placeholder="search (regexp)">' +
         '<span id="match"></span><span id="info"></span></div>' +
         '<div id="legend"></div><div id="chart"></div><div id="tip"></div>');
  document.body.insertAdjacentHTML('beforeend', h.join(''));
  var chart = document.getElementById('chart'), tip = document.getElementById('tip');
  var sel = document.getElementById('sel'), q = document.getElementById('q');
  var icicle = true, zoom = 0, re = null;
  var tot0 = new Float64Array(NN), tot1 = new Float64Array(NN);
  var self1 = new Float64Array(NN), self0 = new Float64Array(NN);

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;')
      .replace(/"/g, '&quot;');
  }
  function selected(th) {
    var v = sel.value;
    if (v === 'all') return true;
    if (v[0] === 'p') return String(D.threads[4 * th]) === v.slice(1);
    return D.threads[4 * th] + '/' + D.threads[4 * th + 1] === v.slice(1);
  }
  /* Fold the selected threads' weights into every node on their paths. */
  function fold() {
    tot0.fill(0); tot1.fill(0); self0.fill(0); self1.fill(0);
    for (var c = 0; c < NC; c++) {
      var th = cells[3 * c];
      if (!selected(th)) continue;
      var w = cells[3 * c + 2] * unit, n = cells[3 * c + 1];
      var after = !diff || D.threads[4 * th + 3] === 1;
      var tot = after ? tot1 : tot0;
      (after ? self1 : self0)[n] += w;
      for (; n >= 0; n = parent[n]) tot[n] += w;
    }
  }
  function ms(ns) {
    return ns >= 1e9 ? (ns / 1e9).toFixed(3) + ' s'
      : (ns / 1e6).toFixed(ns < 1e7 ? 3 : 1) + ' ms';
  }
  function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + '%' : '-'; }
  function hash(s) {
    var x = 0x811c9dc5;     /* FNV-1a, then a final mix */
    for (var k = 0; k < s.length && k < 32; k++)
      x = Math.imul(x ^ s.charCodeAt(k), 16777619);
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d);
    return ((x ^ (x >>> 13)) >>> 0) / 4294967296;
  }
  function color(n) {
    var f = frame[n];
    if (n && D.frames[5 * f + 4]) {
      var nm = fname(f);
      return nm.indexOf('[lost') === 0 ? '#b0b0b0' : '#d9a066';
    }
    if (diff) {
      var d = share(n);
      var a = Math.min(1, Math.abs(d) / maxChange);
      var c = Math.round(235 - 160 * a);   /* no change: light grey */
      if (!(tot0[n] > 0)) {     /* new in AFTER */
        var g = Math.round(120 - 60 * a);
        return 'rgb(255,' + g + ',' + g + ')';
      }
      if (a < 0.01) return 'rgb(' + c + ',' + c + ',' + c + ')';
      return d > 0 ? 'rgb(255,' + c + ',' + c + ')'
                   : 'rgb(' + c + ',' + c + ',255)';
    }
    var v = hash(nname(n));
    return 'rgb(' + (205 + Math.round(50 * v)) + ',' +
      (Math.round(230 * (1 - v) * 0.8) + 20) + ',' + Math.round(55 * v) + ')';
  }
  /* Change of a node's share of all CPU time, after minus before. */
  function share(n) {
    var b = tot0[0] > 0 ? tot0[n] / tot0[0] : 0;
    var a = tot1[0] > 0 ? tot1[n] / tot1[0] : 0;
    return a - b;
  }
  var maxChange = 1e-9;
  function tipText(n) {
    var f = frame[n], L = [nname(n)];
    if (n) {
      var mod = S[D.frames[5 * f + 1]], file = S[D.frames[5 * f + 2]];
      var line = D.frames[5 * f + 3];
      if (file) L.push('source: ' + file + (line ? ':' + line : ''));
      if (mod) L.push('module: ' + mod);
    }
    if (diff) {
      L.push('after:  total ' + ms(tot1[n]) + ' (' + pct(tot1[n], tot1[0]) +
             '), self ' + ms(self1[n]));
      L.push('before: total ' + ms(tot0[n]) + ' (' + pct(tot0[n], tot0[0]) +
             '), self ' + ms(self0[n]));
      L.push('share change: ' + (100 * share(n)).toFixed(2) + ' points');
    } else {
      L.push('total: ' + ms(tot1[n]) + ' (' + pct(tot1[n], tot1[0]) + ')');
      L.push('self:  ' + ms(self1[n]) + ' (' + pct(self1[n], tot1[0]) + ')');
    }
    return L.join('\n');
  }

  /* ---- drawing ---- */
  var H = 16;
  function draw() {
    var W = chart.clientWidth || 1000, out = [];
    maxChange = 1e-9;
    if (diff)
      for (var k = 1; k < NN; k++) {
        var d = Math.abs(share(k));
        if (d > maxChange) maxChange = d;
      }
    var zt = tot1[zoom], rows = maxDepth + 1;
    chart.style.height = rows * H + 'px';
    function y(dp) { return (icicle ? dp : maxDepth - dp) * H; }
    function box(n, x, w, anc) {
      out.push('<div class="f' + (anc ? ' a' : '') +
               (re && re.test(nname(n)) ? ' m' : '') + '" data-n="' + n +
               '" style="left:' + x.toFixed(1) + 'px;top:' + y(depth[n]) +
               'px;width:' + w.toFixed(1) + 'px;background:' + color(n) +
               '">' + (w > 30 ? esc(nname(n)) : '') + '</div>');
    }
    for (var a = parent[zoom]; a >= 0; a = parent[a]) box(a, 0, W, true);
    if (zt > 0) {
      var st = [zoom, 0];
      while (st.length) {
        var x0 = st.pop(), n = st.pop(), w = tot1[n] / zt * W;
        if (w < 0.5) continue;
        box(n, x0, w, false);
        var x = x0, ks = kids[n];
        for (var j = 0; j < ks.length; j++) {
          var cw = tot1[ks[j]] / zt * W;
          if (cw >= 0.5) st.push(ks[j], x);
          x += cw;
        }
      }
    }
    chart.innerHTML = out.join('');
    document.getElementById('info').textContent =
      (diff ? 'after: ' + ms(tot1[0]) + ', before: ' + ms(tot0[0])
            : 'total: ' + ms(tot1[0])) + ' of CPU time';
    var m = '';
    if (re) {
      /* matched share: nodes that match, not counting under a match */
      var sum = 0;
      for (var i = 1; i < NN; i++) {
        if (!re.test(nname(i))) continue;
        var up = parent[i], dup = false;
        for (; up > 0; up = parent[up]) if (re.test(nname(up))) { dup = true; break; }
        if (!dup) sum += tot1[i];
      }
      m = 'matched: ' + pct(sum, tot1[0]) + ' (' + ms(sum) + ')';
    }
    document.getElementById('match').textContent = m;
    document.getElementById('legend').innerHTML = diff
      ? '<span style="background:rgb(255,75,75)">share grew</span>' +
        '<span style="background:rgb(75,75,255);color:#fff">share shrank</span>' +
        '<span style="background:#d9a066">[failed]</span>' +
        '<span style="background:#b0b0b0">[lost]</span> width: after'
      : '<span style="background:#d9a066">[failed]</span>' +
        '<span style="background:#b0b0b0">[lost: reason]</span> ' +
        'width: CPU time (each sample weighs its sampling period)';
  }
  chart.addEventListener('click', function (e) {
    var n = e.target.getAttribute && e.target.getAttribute('data-n');
    if (n !== null && n !== undefined) { zoom = +n; draw(); }
  });
  chart.addEventListener('mousemove', function (e) {
    var n = e.target.getAttribute && e.target.getAttribute('data-n');
    if (n === null || n === undefined) { tip.style.display = 'none'; return; }
    tip.textContent = tipText(+n);
    tip.style.display = 'block';
    tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 420) + 'px';
    tip.style.top = (e.clientY + 14) + 'px';
  });
  chart.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  document.getElementById('flip').addEventListener('click', function () {
    icicle = !icicle;
    this.textContent = icicle ? 'flame' : 'icicle';
    draw();
  });
  document.getElementById('reset').addEventListener('click', function () {
    zoom = 0; draw();
  });
  sel.addEventListener('change', function () { zoom = 0; fold(); draw(); });
  q.addEventListener('input', function () {
    try { re = q.value ? new RegExp(q.value) : null; } catch (err) { re = null; }
    draw();
  });
  window.addEventListener('resize', draw);
  /* #q=REGEXP preselects a search (links, headless checks). */
  var hq = /[#&]q=([^&]*)/.exec(location.hash);
  if (hq) {
    q.value = decodeURIComponent(hq[1]);
    try { re = new RegExp(q.value); } catch (err) { re = null; }
  }
  fold();
  draw();
  /* When the first picture was ready, for bench/export.sh. */
  document.documentElement.setAttribute('data-drawn-ms',
                                        Math.round(performance.now()));
})();
