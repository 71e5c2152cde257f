// zkcheck viewer: selection and the state panel, rendered from the JSON
// data embedded in the page. No network, no library.
(function () {
  'use strict';
  var errors = document.getElementById('errors');
  function report(msg) {
    var d = document.createElement('div');
    d.className = 'error';
    d.textContent = msg;
    errors.appendChild(d);
  }
  window.addEventListener('error', function (e) {
    report('error: ' + e.message + ' (line ' + e.lineno + ')');
  });
  try {
    var D = JSON.parse(document.getElementById('zk-data').textContent);
    var SECTIONS = ['clients', 'servers', 'sessions', 'nodes'];
    // Rebuild every snapshot from the first one and the diffs.
    var states = [];
    var cur = { clients: {}, servers: {}, sessions: {}, nodes: {} };
    D.snapshots.forEach(function (d) {
      var next = {};
      SECTIONS.forEach(function (s) {
        var m = Object.assign({}, cur[s]);
        var c = d[s];
        if (c) {
          if (c.set) Object.assign(m, c.set);
          if (c.del) c.del.forEach(function (k) { delete m[k]; });
        }
        next[s] = m;
      });
      states.push(next);
      cur = next;
    });
    var last = states.length - 1;
    var rows = Array.prototype.slice.call(document.querySelectorAll('svg.timeline rect.row'));
    var sel = -1;

    function rowOf(k) {
      for (var i = 0; i < rows.length; i++) {
        if (+rows[i].getAttribute('data-first') <= k && k <= +rows[i].getAttribute('data-last')) return rows[i];
      }
      return null;
    }
    function stepName(k) { return k === 0 ? 'start' : 'step ' + (k - 1); }
    function el(tag, cls, text) {
      var e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined && text !== null) e.textContent = String(text);
      return e;
    }
    function table(title, section, cols, k) {
      var box = document.createElement('div');
      box.id = 'state-' + section;
      box.appendChild(el('h2', null, title));
      var data = states[k][section];
      var changed = (D.snapshots[k][section] || {}).set || {};
      var names = Object.keys(data).sort();
      if (!names.length) { box.appendChild(el('div', 'empty', 'none')); return box; }
      var t = el('table');
      var head = el('tr');
      head.appendChild(el('th', null, cols[0][1]));
      cols.slice(1).forEach(function (c) { head.appendChild(el('th', null, c[1])); });
      t.appendChild(head);
      names.forEach(function (name) {
        var v = data[name];
        var tr = el('tr', k > 0 && changed[name] ? 'changed' : null);
        tr.setAttribute('data-name', name);
        tr.appendChild(el('td', null, name));
        cols.slice(1).forEach(function (c) {
          var val = v[c[0]];
          if (Array.isArray(val)) val = val.length ? val.join('\n') : '—';
          if (val === null || val === undefined || val === '') val = '—';
          var td = el('td', c[2] ? c[2](v) : null, val);
          if (Array.isArray(v[c[0]])) td.style.whiteSpace = 'pre-wrap';
          tr.appendChild(td);
        });
        t.appendChild(tr);
        if (section === 'clients') {
          var r = el('tr', k > 0 && changed[name] ? 'changed' : null);
          var td = el('td', 'recipe', v.recipe);
          td.colSpan = cols.length;
          r.appendChild(td);
          t.appendChild(r);
        }
      });
      box.appendChild(t);
      return box;
    }
    function render(k) {
      document.getElementById('where').textContent =
        stepName(k) + ' of ' + (last - 1) + (D.violation === k ? ' — the violation' : '');
      document.getElementById('lines').textContent = (D.lines[k] || []).join('\n') || '(nothing happened)';
      var state = document.getElementById('state');
      state.textContent = '';
      state.setAttribute('data-step', String(k));
      state.appendChild(table('Clients (recipe state below each)', 'clients', [
        ['', 'client'], ['belief', 'belief', function (v) { return 'b-' + v.belief.replace(/[, ]+/g, '-'); }],
        ['link', 'link'], ['session', 'session'], ['timer', 'timer']], k));
      state.appendChild(table('Servers', 'servers', [
        ['', 'server'], ['role', 'role'], ['applied', 'applied zxid'], ['partitioned', 'partitioned'], ['watches', 'watches']], k));
      state.appendChild(table('Sessions', 'sessions', [
        ['', 'session'], ['client', 'client'], ['state', 'state', function (v) { return v.state; }]], k));
      state.appendChild(table('Znodes (union of all servers)', 'nodes', [
        ['', 'path'], ['czxid', 'czxid'], ['owner', 'owner session'], ['seq', 'sequence'], ['on', 'only on']], k));
    }
    // Scroll the diagram (not the page) so that the row is in view, a
    // third of the way down when it has to move.
    function reveal(r) {
      var box = document.getElementById('diagram');
      var b = r.getBoundingClientRect();
      var v = box.getBoundingClientRect();
      var head = 40;
      if (b.top < v.top + head || b.bottom > v.bottom) {
        box.scrollTop += b.top - v.top - Math.max(head, box.clientHeight / 3);
      }
    }
    function select(k, scroll) {
      k = Math.max(0, Math.min(last, k));
      if (rows.length) {
        var old = rowOf(sel);
        if (old) old.classList.remove('sel');
        var r = rowOf(k);
        if (r) {
          r.classList.add('sel');
          if (scroll) reveal(r);
        }
      }
      sel = k;
      render(k);
      var hash = '#step=' + (k === 0 ? 'start' : k - 1);
      if (location.hash !== hash && history.replaceState) history.replaceState(null, '', hash);
    }
    function fromHash() {
      var m = /step=(start|\d+)/.exec(location.hash);
      if (!m) return null;
      return m[1] === 'start' ? 0 : +m[1] + 1;
    }
    document.addEventListener('keydown', function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var k = e.key;
      if (k === 'ArrowDown' || k === 'ArrowRight' || k === 'j' || k === 'n') select(sel + 1, true);
      else if (k === 'ArrowUp' || k === 'ArrowLeft' || k === 'k' || k === 'p') select(sel - 1, true);
      else if (k === 'Home') select(0, true);
      else if (k === 'End') select(last, true);
      else if (k === 'v' && D.violation !== null) select(D.violation, true);
      else return;
      e.preventDefault();
    });
    document.getElementById('prev').addEventListener('click', function () { select(sel - 1, true); });
    document.getElementById('next').addEventListener('click', function () { select(sel + 1, true); });
    var diagram = document.getElementById('diagram');
    var heads = document.querySelector('#diagram svg g.heads');
    if (heads) diagram.addEventListener('scroll', function () {
      heads.setAttribute('transform', 'translate(0,' + diagram.scrollTop + ')');
    });
    var svg = document.querySelector('#diagram svg');
    if (svg) svg.addEventListener('click', function (e) {
      for (var i = 0; i < rows.length; i++) {
        var b = rows[i].getBoundingClientRect();
        if (e.clientY >= b.top && e.clientY < b.bottom) { select(+rows[i].getAttribute('data-last'), false); return; }
      }
    });
    window.addEventListener('hashchange', function () {
      var k = fromHash();
      if (k !== null && k !== sel) select(k, true);
    });
    var initial = fromHash();
    select(initial !== null ? initial : (D.violation !== null ? D.violation : 0), true);
    document.getElementById('status').textContent = 'ok';
  } catch (e) {
    report('error: ' + (e && e.message ? e.message : e));
  }
})();
