
'use strict';
const PAGE = JSON.parse(document.getElementById('page-data').textContent);
const detailCache = new Map();
// Every string from the data becomes a text node: nothing the agent wrote is parsed as HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === 'class') node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
  return node;
}
function fmt(value, digits) {
  if (value === null || value === undefined) return '–';
  return typeof value === 'number' && digits !== undefined ? value.toFixed(digits) : String(value);
}
function percent(rate) { return typeof rate === 'number' ? (100 * rate).toFixed(1) + '%' : '–'; }
function cls(text) { return String(text).replace(/[^a-z0-9_-]/gi, ''); }
function readHash() {
  const state = {};
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const at = part.indexOf('=');
    const key = decodeURIComponent(at < 0 ? part : part.slice(0, at));
    state[key] = at < 0 ? '' : decodeURIComponent(part.slice(at + 1));
  }
  state.open = new Set((state.open || '').split(',').filter(Boolean));
  return state;
}
function writeHash(state) {
  const parts = [];
  for (const [key, value] of Object.entries(state)) {
    const text = value instanceof Set ? [...value].join(',') : value;
    if (text) parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(text).replace(/%2C/g, ','));
  }
  history.replaceState(null, '', '#' + parts.join('&'));
  render();
}
function detail(index) {
  if (!detailCache.has(index)) {
    detailCache.set(index, JSON.parse(document.getElementById('detail-' + index).textContent));
  }
  return detailCache.get(index);
}
function kvTable(entries) {
  return el('table', {class: 'kv'}, entries.map(([key, value]) => el('tr', {}, el('td', {}, key), el('td', {}, fmt(value)))));
}
function table(head, rows, numeric) {
  return el('table', {}, el('tr', {}, head.map((h, i) => el('th', {class: numeric(i) ? 'num' : ''}, h))),
    rows.map(row => el('tr', {}, row.map((cell, i) => el('td', {class: numeric(i) ? 'num' : ''}, cell)))));
}
function card(label, value, className) { return el('div', {class: 'card ' + (className || '')}, el('b', {}, value), label); }

// --- one instance's detail, built when it is opened ---
function countsText(tests) { return Object.entries(tests || {}).map(([k, v]) => k + ' ' + v).join(', ') || 'no test counts'; }
function patchBlocks(files) {
  if (!files.length) return [el('div', {class: 'muted'}, 'no patch')];
  return files.flatMap(file => [
    el('div', {}, el('b', {}, file.path), ' — ', el('span', {class: file.status === 'kept' ? 'b-resolved' : 'flag'}, file.status)),
    el('pre', {class: 'diff'}, file.lines.map(([kind, line]) => el('span', {class: 'd-' + cls(kind)}, line || ' ')))]);
}
function textBlock(title, fileName, text, className, missing) {
  return [el('h3', {}, title, fileName ? el('span', {class: 'muted'}, ' (' + fileName + ')') : null),
    text === null || text === undefined ? el('div', {class: 'muted'}, missing) : el('pre', {class: className}, text || '(empty)')];
}
function usageRows(usage) {
  return Object.entries(usage || {}).map(([k, v]) => ['usage ' + k, typeof v === 'object' ? JSON.stringify(v) : v]);
}
function secondsRows(seconds) { return Object.entries(seconds || {}).map(([k, v]) => ['seconds ' + k, fmt(v, 2)]); }
function triesText(tries, resolvedAt) {
  return tries + (tries === 1 ? ' try' : ' tries') + (resolvedAt ? ' · resolved at try ' + resolvedAt : '');
}
// An earlier try: its own verdict, tests (counts and not-passing names; passing names are kept for the last try only), patch, usage, files.
function renderTry(t) {
  const name = 'Try ' + t.number;
  const box = el('div', {class: 'try', 'data-try': t.number});
  box.append(el('h3', {class: 'try-head'}, name + ': ', el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), ' · ', t.reason));
  if (t.detail) box.append(el('div', {}, t.detail));
  box.append(el('h3', {}, name + ' tests'), el('div', {}, countsText(t.tests)));
  if (t.failed_tests.length) {
    box.append(el('ul', {class: 'tests'}, t.failed_tests.map(test => el('li', {class: 't-notpassed'}, '✘ ', test, ' — not passed'))));
  }
  if (t.canaries.length) box.append(el('div', {class: 'muted'}, 'canaries planted: ' + t.canaries.join(', ')));
  box.append(el('h3', {}, name + ' patch'), ...patchBlocks(t.patch));
  box.append(el('h3', {}, name + ' usage, timings'),
    kvTable([...usageRows(t.usage), ...secondsRows(t.seconds), ...Object.entries(t.facts)]));
  box.append(...textBlock(name + ' agent transcript', t.files.transcript, t.transcript, 'transcript', 'no transcript file'),
    ...textBlock(name + ' test output', t.files.test_output, t.test_output, 'test-output', 'no test output file'));
  return box;
}
function renderTries(d) {
  const out = [el('h3', {}, 'Tries'), table(['try', 'bucket', 'reason', 'tests passed', 'tokens', 'seconds'],
    d.tries.map(t => [t.number + (t.final ? ' (final)' : ''), el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), t.reason,
      t.tests.total === undefined ? '–' : fmt(t.tests.passed) + '/' + t.tests.total, fmt(t.usage.total_tokens), fmt(t.seconds.total, 1)]),
    i => i >= 3)];
  for (const t of d.tries) {
    if (t.files.feedback) {
      out.push(...textBlock('Feedback given to try ' + t.number, t.files.feedback, t.feedback, 'feedback', 'no feedback file'));
    }
    out.push(t.final ? el('h3', {class: 'try-head'}, 'Try ' + t.number + ' (final): ', el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), ' · ', t.reason)
      : renderTry(t));
  }
  return out;
}
function renderDetail(d) {
  const box = el('div', {class: 'inst-detail'});
  const tries = d.tries.length;
  box.append(el('h3', {}, d.id, ' ', el('span', {class: 'b-' + cls(d.bucket)}, d.bucket), ' · ', d.reason,
    tries ? ' · ' + triesText(tries, d.resolved_at_try) : null));
  box.append(...renderAttempts(d));
  if (tries) box.append(...renderTries(d));
  if (d.detail) box.append(el('div', {}, d.detail));
  if (d.error) box.append(el('pre', {class: 'error'}, d.error));
  box.append(el('h3', {}, 'Tests'), el('div', {}, countsText(d.tests)));
  if (d.test_rows.length) {
    box.append(el('ul', {class: 'tests'}, d.test_rows.map(([status, name]) =>
      el('li', {class: 't-' + cls(status.replace(' ', ''))}, status === 'passed' ? '✔ ' : status === 'not passed' ? '✘ ' : '? ', name, ' — ', status))));
  }
  if (d.canaries.length) box.append(el('div', {class: 'muted'}, 'canaries planted: ' + d.canaries.join(', ')));
  box.append(el('h3', {}, 'Patch'), ...patchBlocks(d.patch));
  if (d.tamper.length) {
    box.append(el('h3', {class: 'flag'}, 'Tamper (dropped, graded on pristine copies)'),
      table(['path', 'why'], d.tamper.map(t => [t.path, t.why]), () => false));
  }
  if (d.suspicious.length) {
    box.append(el('h3', {class: 'flag'}, 'Suspicious kept lines'),
      table(['path', 'kind', 'line'], d.suspicious.map(s => [s.path, s.kind, el('code', {}, s.line)]), () => false));
  }
  box.append(el('h3', {}, 'Usage, cost, timings' + (tries ? ' (usage and agent/grading/tests seconds summed over the tries)' : '')));
  const cost = d.cost ? [['cost USD', d.cost.usd === null ? 'unpriced (' + d.cost.model + ')' : d.cost.usd]] : [['cost USD', 'no price table']];
  box.append(kvTable([...usageRows(d.usage), ...cost, ...secondsRows(d.seconds), ...Object.entries(d.facts)]));
  box.append(...textBlock('Agent transcript', null, d.transcript, 'transcript', 'no transcript file'),
    ...textBlock('Test output', null, d.test_output, 'test-output', 'no test output file'));
  return box;
}

// --- the run page ---
function bucketCounts(summary) {
  return {resolved: summary.total_resolved_ids.length, unresolved: summary.total_unresolved_ids.length,
    empty_patch: summary.total_emptypatch_ids.length, incomplete: summary.total_incomplete_ids.length,
    error: summary.total_error_ids.length};
}
function renderRunSummary() {
  const s = PAGE.summary, counts = bucketCounts(s);
  const box = document.getElementById('summary');
  box.replaceChildren(el('h2', {}, 'Summary'), el('div', {class: 'cards'},
    card('accuracy', (100 * s.accuracy_score).toFixed(1) + '%'),
    PAGE.tries > 1 ? [card('pass_rate_1', percent(s.pass_rate_1)), card('pass_rate_2', percent(s.pass_rate_2))] : null,
    PAGE.attempts > 1 ? attemptCards(s) : null,
    s.accuracy_score_on_variants !== undefined ? card('accuracy on variants', (100 * s.accuracy_score_on_variants).toFixed(1) + '%') : null,
    card('resolved', s.total_resolved_instances + ' / ' + s.total_instances),
    PAGE.buckets.filter(b => b !== 'resolved').map(b => card(b, counts[b], 'b-' + b)),
    card('tokens', fmt(s.agent_usage.total_tokens)),
    card('cost USD', s.cost ? s.cost.total_usd.toFixed(4) : 'no prices')));
  const notes = [];
  if (PAGE.tries > 1) {
    const late = PAGE.rows.filter(r => r.resolved_at_try === 2).map(r => r.id);
    notes.push('two tries (Aider\'s protocol): pass_rate_1 counts instances resolved at try 1, pass_rate_2 at try 1 or 2; resolved at try 2: ' + (late.join(', ') || 'none'));
  }
  if (PAGE.attempts > 1) notes.push(PAGE.attempts + ' independent attempts per instance: accuracy is the mean success rate over attempts (pass@1), with its 95% interval (exact, over the effective number of trials); the bucket counts are attempt 1\'s; instances by successes: ' + successHistogram(s));
  if (s.memorization_gap) notes.push('memorization gap (fresh variants: real tests with one input changed): ' + s.memorization_gap.instances + ' of ' + s.memorization_gap.resolved + ' resolved instance(s) graded with variants fail a variant (' + percent(s.memorization_gap.of_resolved) + ', 95% interval ' + percent(s.memorization_gap.interval_95[0]) + '–' + percent(s.memorization_gap.interval_95[1]) + ')' + (s.memorization_gap.ids.length ? ': ' + s.memorization_gap.ids.join(', ') : ''));
  if (s.stub_passes_ids.length) notes.push(s.stub_passes_ids.length + ' instance(s) resolve with the untouched stub; accuracy without them ' + (100 * s.accuracy_score_excluding_stub_passes).toFixed(1) + '%');
  if (s.resolved_with_suspicious_lines.length) notes.push('audit: resolved with suspicious kept lines: ' + s.resolved_with_suspicious_lines.join(', '));
  if (s.instances_in_several_result_files.length) notes.push('counted once (latest file): ' + s.instances_in_several_result_files.join(', '));
  if (s.cost && s.cost.unpriced_ids.length) notes.push('unpriced, left out of the cost: ' + s.cost.unpriced_ids.join(', '));
  notes.push('graded by tests ' + s.graded_by.tests + ', by the build only ' + s.graded_by.build_only);
  notes.push('reasons: ' + Object.entries(s.reasons).map(([r, n]) => r + ' ' + n).join(', '));
  box.append(el('ul', {}, notes.map(n => el('li', {}, n))));
  const langs = Object.entries(s.per_language);
  const costs = s.cost ? s.cost.per_language_usd : null;
  const rates = PAGE.tries > 1 ? s.pass_rates_per_language : null;
  const scores = PAGE.attempts > 1 ? s.attempt_scores_per_language : null;
  document.getElementById('languages').replaceChildren(el('h2', {}, 'Per language'),
    table(['language', 'total', ...PAGE.buckets, 'accuracy', ...(rates ? ['pass_rate_1', 'pass_rate_2'] : []),
           ...(scores ? ['pass@1 (95% interval)', 'pass@' + PAGE.attempts, 'pass^' + PAGE.attempts] : []), ...(costs ? ['cost USD'] : [])],
      langs.map(([lang, row]) => [lang, row.total, ...PAGE.buckets.map(b => row[b] || 0),
        (100 * (row.resolved || 0) / (row.total || 1)).toFixed(1) + '%',
        ...(rates ? [percent((rates[lang] || {}).pass_rate_1), percent((rates[lang] || {}).pass_rate_2)] : []),
        ...(scores ? scoreCells(scores[lang] || {}) : []),
        ...(costs ? [fmt(costs[lang], 4)] : [])]),
      i => i > 0));
}
function intervalText(i) { return i ? percent(i.estimate) + ' (' + percent(i.low) + '–' + percent(i.high) + ')' : '–'; }
function attemptCards(s) {
  const ks = PAGE.shown_k;  // as the console shows them (views.shown_k); report.json keeps every k
  return [card('pass@1 (95% interval)', intervalText(s.score_interval_95)),
    ...ks.map(k => card('pass@' + k, percent(s.pass_at_k[k]))), ...ks.map(k => card('pass^' + k, percent(s.pass_hat_k[k])))];
}
function scoreCells(scores) {
  const k = String(PAGE.attempts);
  return [intervalText(scores.score_interval_95), percent((scores.pass_at_k || {})[k]), percent((scores.pass_hat_k || {})[k])];
}
function successHistogram(s) {
  const counts = {};
  for (const [c, n] of Object.values(s.successes_out_of_attempts)) counts[c + '/' + n] = (counts[c + '/' + n] || 0) + 1;
  return Object.entries(counts).sort().map(([key, n]) => n + ' at ' + key).join(', ');
}
function renderAttempts(d) {
  if (!d.attempts || !d.attempts.length) return [];
  const parts = [el('h3', {}, 'Attempts (' + d.attempts.filter(a => a.bucket === 'resolved').length + ' of ' + d.attempts.length + ' resolved; the sections below are attempt 1\'s)'),
    table(['attempt', 'bucket', 'reason', 'tests', 'tries', 'tokens', 'seconds'], d.attempts.map(a => [a.number,
      el('span', {class: 'b-' + cls(a.bucket)}, a.bucket), a.reason, countsText(a.tests), a.tries,
      fmt((a.usage || {}).total_tokens), fmt((a.seconds || {}).total, 1)]), i => i >= 4)];
  for (const a of d.attempts.filter(a => a.patch.length)) parts.push(el('details', {}, el('summary', {}, 'attempt ' + a.number + ': patch'), ...patchBlocks(a.patch)));
  return parts;
}
function select(name, label, options, state, defaultText) {
  const node = el('select', {name}, el('option', {value: ''}, defaultText || 'all'),
    options.map(([value, text]) => el('option', {value}, text)));
  node.value = state[name] || '';
  node.addEventListener('change', () => { state[name] = node.value; writeHash(state); });
  return el('label', {}, label + ' ', node);
}
function uniqueSorted(values) { return [...new Set(values)].sort(); }
function toggle(state, id) {
  if (state.open.has(id)) state.open.delete(id); else state.open.add(id);
  writeHash(state);
}
function runTable(state) {
  const rows = PAGE.rows.map((row, index) => ({row, index})).filter(({row}) =>
    (!state.bucket || row.bucket === state.bucket) && (!state.lang || row.language === state.lang) &&
    (!state.reason || row.reason === state.reason) && triesFilter(state['try'], row));
  const tries = PAGE.tries > 1, attempts = PAGE.attempts > 1;
  if (state.sort === 'time') rows.sort((x, y) => (y.row.seconds ?? -1) - (x.row.seconds ?? -1));
  const body = el('tbody');
  for (const {row, index} of rows) {
    const open = state.open.has(row.id);
    const tr = el('tr', {class: 'inst' + (open ? ' open' : ''), 'data-id': row.id, 'data-bucket': row.bucket,
        'data-tries': row.tries, 'data-resolved-at-try': row.resolved_at_try ?? ''},
      el('td', {}, row.id, row.flagged ? el('span', {class: 'flag', title: 'tamper or suspicious lines'}, ' ⚑') : null),
      el('td', {}, row.language), el('td', {class: 'b-' + cls(row.bucket)}, row.bucket), el('td', {}, row.reason),
      el('td', {class: 'num'}, row.total === null || row.total === undefined ? '–' : row.passed + '/' + row.total),
      tries ? el('td', {class: row.resolved_at_try === 2 ? 'b-resolved late' : ''}, triesText(row.tries, row.resolved_at_try)) : null,
      attempts ? el('td', {class: 'num successes'}, row.successes[0] + '/' + row.successes[1]) : null,
      el('td', {class: 'num'}, fmt(row.seconds, 1)), el('td', {class: 'num'}, fmt(row.usd, 4)));
    tr.addEventListener('click', () => toggle(state, row.id));
    body.append(tr);
    if (open) body.append(el('tr', {class: 'detail'}, el('td', {colspan: 7 + tries + attempts}, renderDetail(detail(index)))));
  }
  const head = ['instance', 'language', 'bucket', 'reason', 'tests passed', ...(tries ? ['tries'] : []),
    ...(attempts ? ['successes'] : []), 'seconds', 'cost USD'];
  return [el('div', {id: 'count'}, 'showing ' + rows.length + ' of ' + PAGE.rows.length + ' instances'),
    el('table', {id: 'instance-table'}, el('thead', {}, el('tr', {}, head
      .map(h => el('th', {class: ['tests passed', 'seconds', 'cost USD'].includes(h) ? 'num' : ''}, h)))), body)];
}
// #try=1 / 2: resolved at that try; #try=retried: had a second try.
function triesFilter(wanted, row) {
  if (!wanted || PAGE.tries < 2) return true;
  return wanted === 'retried' ? row.tries > 1 : String(row.resolved_at_try) === wanted;
}
function renderRun(state) {
  document.getElementById('controls').replaceChildren(
    select('bucket', 'bucket', PAGE.buckets.map(b => [b, b]), state),
    select('lang', 'language', uniqueSorted(PAGE.rows.map(r => r.language)).map(l => [l, l]), state),
    select('reason', 'reason', uniqueSorted(PAGE.rows.map(r => r.reason)).map(r => [r, r]), state),
    ...(PAGE.tries > 1 ? [select('try', 'tries', [['1', 'resolved at try 1'], ['2', 'resolved at try 2'], ['retried', 'had a second try']], state)] : []),
    select('sort', 'sort', [['time', 'time (slowest first)']], state, 'instance id'));
  document.getElementById('instances').replaceChildren(el('h2', {}, 'Instances'), ...runTable(state));
}

// --- the compare page ---
function renderCompareSummary() {
  const c = PAGE.comparison;
  const box = document.getElementById('summary');
  box.replaceChildren(el('h2', {}, 'Summary'),
    el('div', {}, 'A: ', el('code', {}, c.run_a.run_dir)), el('div', {}, 'B: ', el('code', {}, c.run_b.run_dir)),
    el('div', {class: 'cards'},
      card('accuracy A', (100 * c.run_a.accuracy).toFixed(1) + '% (' + c.run_a.resolved + ')'),
      card('accuracy B', (100 * c.run_b.accuracy).toFixed(1) + '% (' + c.run_b.resolved + ')'),
      card('newly resolved', c.newly_resolved.length, 'b-resolved'), card('regressed', c.regressed.length, 'b-unresolved'),
      card('McNemar p', c.mcnemar.p_value.toPrecision(4)), card('common instances', c.common_instances),
      c.paired ? [card('paired p (success rates)', c.paired.p_value.toPrecision(4)),
        card('mean rate difference', (c.paired.mean_difference >= 0 ? '+' : '') + (100 * c.paired.mean_difference).toFixed(1) + ' pts'),
        card('instances needed', c.paired.instances_needed === null ? '–' : c.paired.instances_needed)] : null),
    el('ul', {}, c.notes.map(n => el('li', {}, n)),
      c.newly_resolved.length ? el('li', {class: 'b-resolved'}, 'newly resolved: ' + c.newly_resolved.join(', ')) : null,
      c.regressed.length ? el('li', {class: 'b-unresolved'}, 'regressed: ' + c.regressed.join(', ')) : null,
      c.excluded.length ? el('li', {}, 'excluded (incomplete/error in either run): ' + c.excluded.map(e => e.instance_id + ' (' + e.bucket_a + ' → ' + e.bucket_b + ')').join(', ')) : null,
      c.only_in_a.length ? el('li', {}, 'only in A: ' + c.only_in_a.join(', ')) : null,
      c.only_in_b.length ? el('li', {}, 'only in B: ' + c.only_in_b.join(', ')) : null));
  const cols = ['instances', 'resolved_a', 'resolved_b', 'delta', 'newly_resolved', 'regressed'];
  const usageRows = Object.entries(c.usage).map(([k, r]) => [k, r.a, r.b, r.delta]);
  if (c.cost) usageRows.push(['cost USD', c.cost.a.toFixed(4), c.cost.b.toFixed(4), c.cost.delta.toFixed(4)]);
  document.getElementById('languages').replaceChildren(el('h2', {}, 'Per language'),
    table(['language', ...cols], Object.entries(c.per_language).map(([lang, row]) => [lang, ...cols.map(k => row[k])]), i => i > 0),
    el('h2', {}, 'Reasons'), table(['reason', 'A', 'B', 'delta'], Object.entries(c.reasons).map(([r, row]) => [r, row.a, row.b, row.delta]), i => i > 0),
    el('h2', {}, 'Usage and cost'), table(['', 'A', 'B', 'delta'], usageRows, i => i > 0));
}
function compareTable(state) {
  const rows = PAGE.rows.map((row, index) => ({row, index})).filter(({row}) =>
    (!state.lang || row.language === state.lang) &&
    (!state.flip || (state.flip === 'changed' ? row.changed : row.flip === state.flip)));
  if (state.sort === 'time') rows.sort((x, y) => Math.max(y.row.a.seconds ?? -1, y.row.b.seconds ?? -1) - Math.max(x.row.a.seconds ?? -1, x.row.b.seconds ?? -1));
  const body = el('tbody');
  for (const {row, index} of rows) {
    const open = state.open.has(row.id);
    const tr = el('tr', {class: 'inst' + (row.flip ? ' flip-' + row.flip : '') + (open ? ' open' : ''), 'data-id': row.id, 'data-flip': row.flip},
      el('td', {}, row.id), el('td', {}, row.language),
      el('td', {class: 'b-' + cls(row.a.bucket)}, row.a.bucket), el('td', {class: 'b-' + cls(row.b.bucket)}, row.b.bucket),
      el('td', {}, row.flip ? row.flip.replace('_', ' ') : ''), el('td', {}, row.a.reason + ' → ' + row.b.reason),
      el('td', {class: 'num'}, fmt(row.a.seconds, 1)), el('td', {class: 'num'}, fmt(row.b.seconds, 1)));
    tr.addEventListener('click', () => toggle(state, row.id));
    body.append(tr);
    if (open) {
      const d = detail(index);
      body.append(el('tr', {class: 'detail'}, el('td', {colspan: 8}, el('div', {class: 'sides'},
        el('div', {}, el('h3', {}, 'A'), renderDetail(d.a)), el('div', {}, el('h3', {}, 'B'), renderDetail(d.b))))));
    }
  }
  return [el('div', {id: 'count'}, 'showing ' + rows.length + ' of ' + PAGE.rows.length + ' instances'),
    el('table', {id: 'instance-table'}, el('thead', {}, el('tr', {}, ['instance', 'language', 'bucket A', 'bucket B', 'flip', 'reason A → B', 'seconds A', 'seconds B']
      .map((h, i) => el('th', {class: i >= 6 ? 'num' : ''}, h)))), body)];
}
function renderCompare(state) {
  document.getElementById('controls').replaceChildren(
    select('flip', 'flip', [['newly_resolved', 'newly resolved'], ['regressed', 'regressed'], ['changed', 'bucket changed'], ['excluded', 'excluded']], state),
    select('lang', 'language', uniqueSorted(PAGE.rows.map(r => r.language)).map(l => [l, l]), state),
    select('sort', 'sort', [['time', 'time (slowest first)']], state, 'instance id'));
  document.getElementById('instances').replaceChildren(el('h2', {}, 'Instances'), ...compareTable(state));
}

function render() {
  const state = readHash();
  if (PAGE.kind === 'compare') renderCompare(state); else renderRun(state);
  document.documentElement.setAttribute('data-rendered-ms', performance.now().toFixed(1));
}
document.title = PAGE.title;
document.getElementById('title').textContent = PAGE.title;
document.getElementById('meta').textContent = PAGE.kind === 'run' ? 'run directories: ' + PAGE.run_dirs.join(', ') : 'B against A';
if (PAGE.kind === 'compare') renderCompareSummary(); else renderRunSummary();
window.addEventListener('hashchange', render);
render();
